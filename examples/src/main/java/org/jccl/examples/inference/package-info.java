/**
 * A non-blocking inference server: a tensor-parallel MLP served over HTTP with dynamic batching
 * ({@link org.jccl.examples.inference.InferenceServer}).
 */
@NullMarked
package org.jccl.examples.inference;

import org.jspecify.annotations.NullMarked;
