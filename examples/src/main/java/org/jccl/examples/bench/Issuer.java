package org.jccl.examples.bench;

import java.util.concurrent.CompletableFuture;

/** Issues one rank's prepared operation through one API path; the future completes with the operation. */
interface Issuer {
    CompletableFuture<?> issue(int rank);

    /** The API path measured, as the report names it. */
    String path();
}
