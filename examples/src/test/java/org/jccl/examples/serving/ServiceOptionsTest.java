package org.jccl.examples.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A service's command line: three common positional arguments, the service's own after them, flags anywhere. */
class ServiceOptionsTest {
    @Test
    void positionalArgumentsAndFlagsInAnyOrder() {
        ServiceOptions o = ServiceOptions.parse(new String[] {"0", "--load", "1,4", "64", "2500", "16", "--plot", "a.svg", "3"});
        assertEquals(0, o.port());
        assertEquals(64, o.maxInFlight());
        assertEquals(Duration.ofMillis(2500), o.timeout());
        assertEquals(List.of("16", "3"), o.rest());
        assertEquals(16, o.intArg(0, 32));
        assertEquals(3, o.intArg(1, 2));
        assertEquals(7, o.intArg(2, 7));
        assertEquals("1,4", o.flag("--load"));
        assertEquals("a.svg", o.flag("--plot"));
        assertNull(o.flag("--load-seconds"));
    }

    @Test
    void defaults() {
        ServiceOptions o = ServiceOptions.parse(new String[0]);
        assertEquals(8080, o.port());
        assertEquals(1024, o.maxInFlight());
        assertEquals(Duration.ofSeconds(5), o.timeout());
        assertEquals(List.of(), o.rest());
    }
}
