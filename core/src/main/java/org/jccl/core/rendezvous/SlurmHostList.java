package org.jccl.core.rendezvous;

import java.util.ArrayList;
import java.util.List;
import org.jccl.core.error.InvalidArgumentException;

/**
 * Slurm's compressed host lists, as in {@code SLURM_JOB_NODELIST}: entries separated by commas, each a name with
 * zero or more bracketed sets of numbers and ranges, e.g. {@code gpu[01-03,07],login1} is gpu01, gpu02, gpu03, gpu07
 * and login1; {@code rack[1-2]-n[1-2]} is rack1-n1, rack1-n2, rack2-n1, rack2-n2. A range keeps the zero padding of
 * its first number ({@code [08-10]} is 08, 09, 10). Hosts come in Slurm's order (the first is the job's first node).
 *
 * <p>The whole list is read and its hosts counted before any host name is made, so a short list that names more
 * than {@value #MAX_HOSTS} hosts (e.g. forty brackets of a million numbers each) is refused at once, costing memory in
 * proportion to its length only.
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
     *                                  backwards, something other than digits inside brackets), or if it names more
     *                                  than {@value #MAX_HOSTS} hosts in all
     */
    public static List<String> expand(String list) {
        List<HostPattern> patterns = new ArrayList<>();
        for (String entry : entries(list)) patterns.add(HostPattern.parse(list, entry));
        long total = 0;
        for (HostPattern pattern : patterns) {
            total += pattern.hostCount(MAX_HOSTS - total);
            if (total > MAX_HOSTS) throw malformed(list, "it names more than " + MAX_HOSTS + " hosts");
        }
        List<String> hosts = new ArrayList<>((int) total);
        for (HostPattern pattern : patterns) pattern.expandInto(hosts);
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

    static InvalidArgumentException malformed(String list, String why) {
        return new InvalidArgumentException("cannot read the Slurm host list '" + list + "': " + why);
    }
}
