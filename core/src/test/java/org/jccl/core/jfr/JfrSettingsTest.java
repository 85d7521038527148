package org.jccl.core.jfr;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import jdk.jfr.EventType;
import jdk.jfr.SettingDescriptor;
import org.junit.jupiter.api.Test;

/** {@code jccl.jfc} in the jar records every jccl event in full; without it, only slow operations are recorded. */
class JfrSettingsTest {
    @Test
    void theShippedSettingsEnableEveryJcclEventWithoutThresholdOrStackTrace() {
        Map<String, String> settings = JfrSettings.configuration().getSettings();
        for (String event : new String[] {OperationEvent.NAME, LifecycleEvent.NAME, TimeoutEvent.NAME, StallEvent.NAME}) {
            assertEquals("true", settings.get(event + "#enabled"), event);
            assertEquals("0 ms", settings.get(event + "#threshold"), event);
            assertEquals("false", settings.get(event + "#stackTrace"), event);
        }
    }

    @Test
    void aRecordingThatDoesNotNameTheOperationEventKeepsOnlyOperationsOfTenMillisecondsOrMore() {
        EventType type = EventType.getEventType(OperationEvent.class);
        String threshold = type.getSettingDescriptors().stream().filter(s -> s.getName().equals("threshold"))
                .map(SettingDescriptor::getDefaultValue).findFirst().orElseThrow();
        assertEquals("10 ms", threshold);
    }
}
