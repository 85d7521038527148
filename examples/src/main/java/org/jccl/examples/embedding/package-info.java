/**
 * A reactive microservice: a sharded embedding lookup served over HTTP, every request one ordered step of
 * collectives over all ranks ({@link org.jccl.examples.embedding.EmbeddingService}).
 */
@NullMarked
package org.jccl.examples.embedding;

import org.jspecify.annotations.NullMarked;
