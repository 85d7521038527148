/**
 * The rendezvous store: a small authenticated key-value server over Netty that lets the processes of one job
 * exchange what they need before communicator creation (NCCL unique ids, addresses), meet at barriers, and learn
 * which ranks died. {@link org.jccl.core.rendezvous.RendezvousServer} listens;
 * {@link org.jccl.core.rendezvous.RendezvousClient} is the asynchronous client with blocking twins;
 * {@link org.jccl.core.rendezvous.Rendezvous} joins a job from the environment a launcher set. Netty threads here
 * do rendezvous only, never GPU calls; client futures complete on a separate callback thread.
 */
@NullMarked
package org.jccl.core.rendezvous;

import org.jspecify.annotations.NullMarked;
