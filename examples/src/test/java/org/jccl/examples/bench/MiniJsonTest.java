package org.jccl.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MiniJsonTest {
    @Test
    void readsEveryKindOfValue() {
        Map<String, Object> expected = new LinkedHashMap<>();
        expected.put("s", "a\"b\\c/\n\u00e9");
        expected.put("n", -1.5e3);
        expected.put("t", true);
        expected.put("f", false);
        expected.put("z", null);
        expected.put("a", Arrays.asList(1.0, "x", null, List.of()));
        expected.put("o", Map.of("k", Map.of()));
        assertEquals(expected, MiniJson.parseObject(
                " {\"s\":\"a\\\"b\\\\c\\/\\n\\u00e9\", \"n\" : -1.5e3,\"t\":true,\"f\":false,\"z\":null,\"a\":[1,\"x\",null,[]],\"o\":{\"k\":{}}} "));
    }

    @Test
    void refusesWhatIsNotOneObject() {
        assertThrows(IllegalArgumentException.class, () -> MiniJson.parseObject("[1]"));
        assertThrows(IllegalArgumentException.class, () -> MiniJson.parseObject("{\"a\":1} x"));
        assertThrows(IllegalArgumentException.class, () -> MiniJson.parseObject("{\"a\":}"));
        assertThrows(IllegalArgumentException.class, () -> MiniJson.parseObject("{\"a\":\"open"));
        assertThrows(IllegalArgumentException.class, () -> MiniJson.parseObject("{a:1}"));
        assertThrows(IllegalArgumentException.class, () -> MiniJson.parseObject(""));
    }
}
