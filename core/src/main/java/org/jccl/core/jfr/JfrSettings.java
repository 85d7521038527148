package org.jccl.core.jfr;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import jdk.jfr.Configuration;

/**
 * jccl's recording settings, {@code jccl.jfc} in core's jar: every jccl event, each operation included, without
 * stack traces; no JDK event (combine it with the JDK's {@code default} or {@code profile} for those). From the command
 * line, extract it ({@code unzip -p jccl-core.jar org/jccl/core/jfr/jccl.jfc > jccl.jfc}) and start the JVM with
 * {@code -XX:StartFlightRecording:settings=default,settings=jccl.jfc,filename=run.jfr}; in code,
 * {@code new Recording(JfrSettings.configuration())}.
 */
public final class JfrSettings {
    /** Where the settings file lies in core's jar. */
    public static final String RESOURCE = "/org/jccl/core/jfr/jccl.jfc";

    private JfrSettings() {
    }

    /** The settings of {@code jccl.jfc}, for {@code new jdk.jfr.Recording(configuration)}. */
    public static Configuration configuration() {
        try (InputStream in = JfrSettings.class.getResourceAsStream(RESOURCE)) {
            if (in == null) throw new IllegalStateException(RESOURCE + " is missing from jccl's jar");
            try (Reader reader = new InputStreamReader(in, StandardCharsets.UTF_8)) {
                return Configuration.create(reader);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + RESOURCE, e);
        } catch (ParseException e) {
            throw new IllegalStateException(RESOURCE + " is not a valid JFR settings file", e);
        }
    }
}
