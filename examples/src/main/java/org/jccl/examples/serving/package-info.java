/**
 * What the example HTTP services share: rank 0's HTTP front over an ordered stream of steps
 * ({@link org.jccl.examples.serving.RankZeroFront}), the requests it holds ({@link org.jccl.examples.serving.PendingRequest})
 * and the command line ({@link org.jccl.examples.serving.ServiceOptions}).
 */
@NullMarked
package org.jccl.examples.serving;

import org.jspecify.annotations.NullMarked;
