package org.jccl.examples.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.handler.codec.http.QueryStringDecoder;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Every service reads a deadline alike: a positive number of milliseconds, or the default when absent. */
class RequestInputTest {
    private static final Duration FALLBACK = Duration.ofSeconds(5);

    private static Duration timeout(String uri) {
        return RequestInput.timeout(new QueryStringDecoder(uri), FALLBACK);
    }

    @Test
    void aDeadlineIsAPositiveNumberOfMillisecondsOrTheDefault() {
        assertEquals(FALLBACK, timeout("/x?ids=1"));
        assertEquals(Duration.ofMillis(150), timeout("/x?timeoutMs=150"));
        assertEquals(Duration.ofMillis(RequestInput.MAX_MILLIS), timeout("/x?timeoutMs=60000"));
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> timeout("/x?timeoutMs=0"));
        assertTrue(zero.getMessage().contains("a deadline must be positive"), zero.getMessage());
        for (String bad : new String[] {"zz", "", "-5", "60001", "1.5", "99999999999999999999"}) {
            assertThrows(IllegalArgumentException.class, () -> timeout("/x?timeoutMs=" + bad), bad);
        }
        assertEquals(0, RequestInput.millis("0", "computeMs", 0), "a simulated compute time may be zero");
    }

    @Test
    void messagesRepeatAShortPieceOfTheInputAndItsLength() {
        String long3000 = "z".repeat(3000);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> timeout("/x?timeoutMs=" + long3000));
        assertTrue(e.getMessage().length() < 200, e.getMessage());
        assertTrue(e.getMessage().contains("(3000 characters)"), e.getMessage());
        assertEquals("'abc'", RequestInput.echo("abc"));
    }
}
