/**
 * jccl's operations as Micrometer meters ({@link org.jccl.core.metrics.JcclMetrics}). Micrometer is an optional
 * dependency of core: nothing outside this package refers to it, so without it on the class path no class here is
 * loaded and nothing is recorded.
 */
@NullMarked
package org.jccl.core.metrics;

import org.jspecify.annotations.NullMarked;
