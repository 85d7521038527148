/** The one unchecked exception hierarchy of jccl and the factory that maps library result codes onto it. */
@NullMarked
package org.jccl.core.error;

import org.jspecify.annotations.NullMarked;
