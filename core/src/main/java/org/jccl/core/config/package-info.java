/** Every jccl configuration key (system property and environment variable) and its default. */
@NullMarked
package org.jccl.core.config;

import org.jspecify.annotations.NullMarked;
