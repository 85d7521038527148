/**
 * A model-shaped prefill → decode KV-cache pipeline on jccl's paged KV transfer
 * ({@link org.jccl.examples.kvcache.KvCachePipeline}).
 */
@NullMarked
package org.jccl.examples.kvcache;

import org.jspecify.annotations.NullMarked;
