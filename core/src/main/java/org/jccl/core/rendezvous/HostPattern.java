package org.jccl.core.rendezvous;

import java.util.ArrayList;
import java.util.List;

/**
 * One entry of a Slurm host list, read but not expanded: literal text between bracketed sets of numbers. Kept apart
 * from its expansion so that {@link SlurmHostList} can count an entry's hosts (the product of its sets' sizes) and
 * refuse a list that names too many before making a single name.
 */
final class HostPattern {
    /** The text before each set, then the text after the last one: {@code literals.size() == sets.size() + 1}. */
    private final List<String> literals;
    private final List<List<NumberRange>> sets;

    private HostPattern(List<String> literals, List<List<NumberRange>> sets) {
        this.literals = literals;
        this.sets = sets;
    }

    /** Reads one entry ({@code list} is the whole list, for messages). */
    static HostPattern parse(String list, String entry) {
        List<String> literals = new ArrayList<>();
        List<List<NumberRange>> sets = new ArrayList<>();
        int at = 0;
        for (int open = entry.indexOf('[', at); open >= 0; open = entry.indexOf('[', at)) {
            int close = entry.indexOf(']', open);
            if (close < 0) throw SlurmHostList.malformed(list, "a '[' is never closed");
            literals.add(entry.substring(at, open));
            sets.add(ranges(list, entry.substring(open + 1, close)));
            at = close + 1;
        }
        literals.add(entry.substring(at));
        return new HostPattern(literals, sets);
    }

    /**
     * How many hosts this entry names, or any number above {@code limit} once the count passes it (so that forty
     * sets of a million numbers neither overflow nor take long to count).
     */
    long hostCount(long limit) {
        long count = 1;
        for (List<NumberRange> set : sets) {
            long size = 0;
            for (NumberRange range : set) {
                size += range.size(); // at most 10^18 on top of at most limit: no overflow
                if (size > limit) return limit + 1;
            }
            if (count > limit / size) return limit + 1;
            count *= size;
        }
        return count;
    }

    /** Appends every host of this entry, in Slurm's order (the last set varies fastest). */
    void expandInto(List<String> out) {
        expand(0, literals.get(0), out);
    }

    private void expand(int set, String prefix, List<String> out) {
        if (set == sets.size()) {
            out.add(prefix);
            return;
        }
        String suffix = literals.get(set + 1);
        for (NumberRange range : sets.get(set)) {
            for (long n = range.from(); n <= range.to(); n++) expand(set + 1, prefix + range.text(n) + suffix, out);
        }
    }

    /** The ranges of one bracket's content, e.g. {@code 01-03,07}. */
    private static List<NumberRange> ranges(String list, String content) {
        List<NumberRange> out = new ArrayList<>();
        for (String part : content.split(",", -1)) {
            int dash = part.indexOf('-');
            String lo = (dash < 0 ? part : part.substring(0, dash)).trim();
            String hi = (dash < 0 ? part : part.substring(dash + 1)).trim();
            if (!digits(lo) || !digits(hi)) {
                throw SlurmHostList.malformed(list, "'[" + content + "]' must hold numbers and ranges");
            }
            long from = Long.parseLong(lo);
            long to = Long.parseLong(hi);
            if (to < from) throw SlurmHostList.malformed(list, "the range " + part + " runs backwards");
            out.add(new NumberRange(from, to, lo.length()));
        }
        return out;
    }

    private static boolean digits(String s) {
        return !s.isEmpty() && s.length() <= 18 && s.chars().allMatch(c -> c >= '0' && c <= '9');
    }

    /** {@code from..to} inclusive, written at least {@code width} digits wide (the padding of its first number). */
    private record NumberRange(long from, long to, int width) {
        long size() {
            return to - from + 1;
        }

        String text(long n) {
            String s = Long.toString(n);
            return s.length() >= width ? s : "0".repeat(width - s.length()) + s;
        }
    }
}
