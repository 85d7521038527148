package org.jccl.examples.serving;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A service's command line: {@code [port (0: any)] [max requests in flight] [timeout ms]} followed by the service's own
 * positional arguments, and {@code --flag value} pairs anywhere ({@code --load}, {@code --load-requests},
 * {@code --load-seconds}, {@code --plot}, and the service's own).
 */
public record ServiceOptions(int port, int maxInFlight, Duration timeout, List<String> rest, Map<String, String> flags) {
    /** Parses {@code args}; the defaults are port 8080, 1024 requests in flight, a 5 s timeout. */
    public static ServiceOptions parse(String[] args) {
        List<String> positional = new ArrayList<>();
        Map<String, String> flags = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].startsWith("--") && i + 1 < args.length) flags.put(args[i], args[++i]);
            else positional.add(args[i]);
        }
        int port = positional.size() > 0 ? Integer.parseInt(positional.get(0)) : 8080;
        int maxInFlight = positional.size() > 1 ? Integer.parseInt(positional.get(1)) : 1024;
        Duration timeout = Duration.ofMillis(positional.size() > 2 ? Long.parseLong(positional.get(2)) : 5000);
        return new ServiceOptions(port, maxInFlight, timeout, List.copyOf(positional.subList(Math.min(3, positional.size()),
                positional.size())), Map.copyOf(flags));
    }

    /** The service's own positional argument {@code i} (after the three common ones), or {@code fallback}. */
    public int intArg(int i, int fallback) {
        return rest.size() > i ? Integer.parseInt(rest.get(i)) : fallback;
    }

    /** A flag's value, or null. */
    public @Nullable String flag(String name) {
        return flags.get(name);
    }
}
