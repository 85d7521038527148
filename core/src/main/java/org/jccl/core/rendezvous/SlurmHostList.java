package org.jccl.core.rendezvous;

import java.util.ArrayList;
import java.util.List;
import org.jccl.core.error.InvalidArgumentException;

/**
 * Slurm's compressed host lists, as in {@code SLURM_JOB_NODELIST}: entries separated by commas, each a name with
 * zero or more bracketed sets of numbers and ranges, e.g. {@code gpu[01-03,07],login1} is gpu01, gpu02, gpu03, gpu07
 * and login1; {@code rack[1-2]-n[1-2]} is rack1-n1, rack1-n2, rack2-n1, rack2-n2. A range keeps the zero padding of
 * its first number ({@code [08-10]} is 08, 09, 10). Hosts come in Slurm's order (the first is the job's first node).
 */
public final class SlurmHostList {
    /** More hosts than any cluster has: a longer list is a mistake, not a job (and would exhaust the heap). */
    static final int MAX_HOSTS = 1 << 20;

    private SlurmHostList() {
    }

    /**
     * Every host of the list, in order.
     *
     * @throws InvalidArgumentException if the list is empty or malformed (unbalanced brackets, a range that runs
     *                                  backwards, something other than digits inside brackets)
     */
    public static List<String> expand(String list) {
        List<String> hosts = new ArrayList<>();
        for (String entry : entries(list)) expandEntry(list, entry, 0, "", hosts);
        return List.copyOf(hosts);
    }

    /**
     * The first host of the list (a job's master by convention).
     *
     * @throws InvalidArgumentException as {@link #expand(String)}
     */
    public static String first(String list) {
        return expand(list).get(0);
    }

    /** Splits at the commas outside brackets. */
    private static List<String> entries(String list) {
        List<String> entries = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < list.length(); i++) {
            char c = list.charAt(i);
            if (c == '[') depth++;
            else if (c == ']') depth--;
            if (depth < 0 || depth > 1) throw malformed(list, "unbalanced or nested brackets");
            if (c == ',' && depth == 0) {
                entries.add(entry(list, start, i));
                start = i + 1;
            }
        }
        if (depth != 0) throw malformed(list, "a '[' is never closed");
        entries.add(entry(list, start, list.length()));
        return entries;
    }

    private static String entry(String list, int from, int to) {
        String e = list.substring(from, to).trim();
        if (e.isEmpty()) throw malformed(list, "an empty host name");
        return e;
    }

    /** Appends every host of {@code entry} from {@code at} on, each prefixed with {@code prefix}. */
    private static void expandEntry(String list, String entry, int at, String prefix, List<String> out) {
        int open = entry.indexOf('[', at);
        if (open < 0) {
            if (out.size() >= MAX_HOSTS) throw malformed(list, "it names more than " + MAX_HOSTS + " hosts");
            out.add(prefix + entry.substring(at));
            return;
        }
        int close = closing(list, entry, open);
        String head = prefix + entry.substring(at, open);
        for (String n : numbers(list, entry.substring(open + 1, close))) {
            expandEntry(list, entry, close + 1, head + n, out);
        }
    }

    private static int closing(String list, String entry, int open) {
        int close = entry.indexOf(']', open);
        if (close < 0) throw malformed(list, "a '[' is never closed");
        return close;
    }

    /** The numbers of one bracket's content, e.g. {@code 01-03,07}, as text with the padding kept. */
    private static List<String> numbers(String list, String set) {
        List<String> out = new ArrayList<>();
        for (String part : set.split(",", -1)) {
            int dash = part.indexOf('-');
            String lo = (dash < 0 ? part : part.substring(0, dash)).trim();
            String hi = (dash < 0 ? part : part.substring(dash + 1)).trim();
            if (!digits(lo) || !digits(hi)) throw malformed(list, "'[" + set + "]' must hold numbers and ranges");
            long from = Long.parseLong(lo);
            long to = Long.parseLong(hi);
            if (to < from) throw malformed(list, "the range " + part + " runs backwards");
            if (to - from >= MAX_HOSTS - out.size()) throw malformed(list, "it names more than " + MAX_HOSTS + " hosts");
            for (long n = from; n <= to; n++) out.add(pad(n, lo.length()));
        }
        return out;
    }

    private static boolean digits(String s) {
        return !s.isEmpty() && s.length() <= 18 && s.chars().allMatch(c -> c >= '0' && c <= '9');
    }

    private static String pad(long n, int width) {
        String s = Long.toString(n);
        return s.length() >= width ? s : "0".repeat(width - s.length()) + s;
    }

    private static InvalidArgumentException malformed(String list, String why) {
        return new InvalidArgumentException("cannot read the Slurm host list '" + list + "': " + why);
    }
}
