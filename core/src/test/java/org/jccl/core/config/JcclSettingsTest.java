package org.jccl.core.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Reading settings: every duration form, and the one start-up line that never shows the secret. */
class JcclSettingsTest {
    @ParameterizedTest
    @CsvSource({"250us, 250000", "500ms, 500000000", "30s, 30000000000", "10m, 600000000000", "2h, 7200000000000",
            "1500, 1500000000", "PT1.5S, 1500000000", "pt2m, 120000000000", "' 7 MS ', 7000000", "0, 0"})
    void everyDurationForm(String text, long nanos) {
        assertEquals(Duration.ofNanos(nanos), JcclSettings.parseDuration(text, null));
    }

    @ParameterizedTest
    @CsvSource({"ten seconds", "s", "5 parsecs", "1.5s", "''"})
    void anUnreadableDurationNamesTheSettingAndTheText(String text) {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> JcclSettings.parseDuration(text, JcclSettings.TIMEOUT));
        assertTrue(e.getMessage().startsWith("jccl.timeout (JCCL_TIMEOUT): cannot read '" + text + "'"), e.getMessage());
        InvalidArgumentException anonymous = assertThrows(InvalidArgumentException.class,
                () -> JcclSettings.parseDuration(text, null));
        assertTrue(anonymous.getMessage().startsWith("duration: cannot read"), anonymous.getMessage());
    }

    @Test
    void theStartUpLineNamesChangedSettingsOnceAndNeverTheSecret() throws Exception {
        String secret = "a-secret-of-at-least-16-characters";
        String[] keys = {JcclSettings.RENDEZVOUS_SECRET.property(), JcclSettings.TIMEOUT.property(), JcclSettings.BACKEND.property()};
        String[] saved = new String[keys.length];
        for (int i = 0; i < keys.length; i++) saved[i] = System.getProperty(keys[i]);
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        AtomicBoolean logged = loggedFlag();
        boolean wasLogged = logged.get();
        try {
            System.setProperty(JcclSettings.RENDEZVOUS_SECRET.property(), secret);
            System.setProperty(JcclSettings.TIMEOUT.property(), "30s");
            System.setProperty(JcclSettings.BACKEND.property(), JcclSettings.BACKEND.defaultValue()); // set, unchanged
            System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
            logged.set(false);
            JcclSettings.logOnce("backend test");
            JcclSettings.logOnce("backend test, again");
        } finally {
            System.setErr(err);
            logged.set(wasLogged || logged.get());
            for (int i = 0; i < keys.length; i++) {
                if (saved[i] == null) System.clearProperty(keys[i]);
                else System.setProperty(keys[i], saved[i]);
            }
        }
        String out = captured.toString(StandardCharsets.UTF_8);
        String line = out.lines().filter(l -> l.contains("backend test")).findFirst().orElse("");
        assertTrue(line.contains(" (settings changed: "), out);
        assertTrue(line.contains("jccl.timeout=30s"), line);
        assertTrue(line.contains("jccl.rendezvous.secret=<set>"), line);
        assertFalse(line.contains(JcclSettings.BACKEND.property() + "="), "set to its default is no change: " + line);
        assertFalse(out.contains(secret), "the secret itself is never logged: " + out);
        assertFalse(out.contains("again"), "logged once per process: " + out);
    }

    @Test
    void changedSettingsThatDoNotFitTheStartUpLineAreCountedInstead() throws Exception {
        String saved = System.getProperty(JcclSettings.KERNEL_CACHE.property());
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        AtomicBoolean logged = loggedFlag();
        boolean wasLogged = logged.get();
        String line = "jccl 9.9: backend host (auto), pure Java, 64 CPU cores";
        try {
            System.setProperty(JcclSettings.KERNEL_CACHE.property(), "/a/rather/long/path/to/a/kernel/cache/folder/of/this/machine");
            System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
            logged.set(false);
            JcclSettings.logOnce(line);
        } finally {
            System.setErr(err);
            logged.set(wasLogged || logged.get());
            if (saved == null) System.clearProperty(JcclSettings.KERNEL_CACHE.property());
            else System.setProperty(JcclSettings.KERNEL_CACHE.property(), saved);
        }
        String message = captured.toString(StandardCharsets.UTF_8).lines().filter(l -> l.contains(line)).findFirst().orElse("");
        message = message.substring(message.indexOf(line));
        assertTrue(message.length() <= 120, message.length() + " characters: " + message);
        assertTrue(message.contains("1 setting changed; DEBUG lists them"), message);
    }

    /**
     * The once-per-process flag: another test's backend may have logged already in this JVM, so the test clears it
     * (and leaves it set, as it found it or as the test left it).
     */
    private static AtomicBoolean loggedFlag() throws ReflectiveOperationException {
        Field f = JcclSettings.class.getDeclaredField("LOGGED");
        f.setAccessible(true);
        return (AtomicBoolean) f.get(null);
    }
}
