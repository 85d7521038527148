package org.jccl.examples.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads one JSON value (objects, arrays, strings, numbers, true, false, null) into maps, lists, strings, doubles,
 * booleans and nulls: enough for Bench's own JSON lines, without a JSON library in the examples module.
 */
final class MiniJson {
    private final String text;
    private int at;

    private MiniJson(String text) {
        this.text = text;
    }

    /** The object {@code line} holds; IllegalArgumentException if it is not exactly one JSON object. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> parseObject(String line) {
        MiniJson p = new MiniJson(line);
        Object value = p.value();
        p.skipBlanks();
        if (p.at != line.length()) throw p.error("text after the value");
        if (!(value instanceof Map)) throw new IllegalArgumentException("not a JSON object: " + line);
        return (Map<String, Object>) value;
    }

    private Object value() {
        skipBlanks();
        if (at >= text.length()) throw error("a value");
        char c = text.charAt(at);
        if (c == '{') return object();
        if (c == '[') return array();
        if (c == '"') return string();
        if (text.startsWith("true", at)) return word("true", Boolean.TRUE);
        if (text.startsWith("false", at)) return word("false", Boolean.FALSE);
        if (text.startsWith("null", at)) return word("null", null);
        return number();
    }

    private Map<String, Object> object() {
        Map<String, Object> map = new LinkedHashMap<>();
        at++;
        skipBlanks();
        if (peek() == '}') {
            at++;
            return map;
        }
        while (true) {
            skipBlanks();
            if (peek() != '"') throw error("a key");
            String key = string();
            skipBlanks();
            expect(':');
            map.put(key, value());
            skipBlanks();
            if (peek() == ',') {
                at++;
            } else {
                expect('}');
                return map;
            }
        }
    }

    private List<Object> array() {
        List<Object> list = new ArrayList<>();
        at++;
        skipBlanks();
        if (peek() == ']') {
            at++;
            return list;
        }
        while (true) {
            list.add(value());
            skipBlanks();
            if (peek() == ',') {
                at++;
            } else {
                expect(']');
                return list;
            }
        }
    }

    private String string() {
        StringBuilder s = new StringBuilder();
        at++;
        while (at < text.length()) {
            char c = text.charAt(at++);
            if (c == '"') return s.toString();
            if (c != '\\') {
                s.append(c);
                continue;
            }
            if (at >= text.length()) break;
            char e = text.charAt(at++);
            switch (e) {
                case 'b' -> s.append('\b');
                case 'f' -> s.append('\f');
                case 'n' -> s.append('\n');
                case 'r' -> s.append('\r');
                case 't' -> s.append('\t');
                case 'u' -> {
                    if (at + 4 > text.length()) throw error("four hex digits");
                    s.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    at += 4;
                }
                default -> s.append(e); // \" \\ \/
            }
        }
        throw error("the closing quote");
    }

    private Double number() {
        int start = at;
        while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) at++;
        try {
            return Double.valueOf(text.substring(start, at));
        } catch (NumberFormatException e) {
            at = start;
            throw error("a value");
        }
    }

    private Object word(String word, Object value) {
        at += word.length();
        return value;
    }

    private void expect(char c) {
        if (peek() != c) throw error("'" + c + "'");
        at++;
    }

    private char peek() {
        return at < text.length() ? text.charAt(at) : '\0';
    }

    private void skipBlanks() {
        while (at < text.length() && Character.isWhitespace(text.charAt(at))) at++;
    }

    private IllegalArgumentException error(String expected) {
        return new IllegalArgumentException("bad JSON at character " + at + ", expected " + expected + ": " + text);
    }
}
