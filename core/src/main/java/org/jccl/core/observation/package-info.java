/**
 * jccl's operations as Micrometer observations ({@link org.jccl.core.observation.JcclObservations}), for tracing.
 * Micrometer Observation is an optional dependency of core: nothing outside this package refers to it, so without it
 * on the class path no class here is loaded and nothing is observed.
 */
@NullMarked
package org.jccl.core.observation;

import org.jspecify.annotations.NullMarked;
