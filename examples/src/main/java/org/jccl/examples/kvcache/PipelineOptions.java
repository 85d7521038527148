package org.jccl.examples.kvcache;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jccl.core.DataType;
import org.jccl.rma.kv.KvLayout;
import org.jccl.rma.kv.KvPathKind;

/**
 * The pipeline's command line. Every rank parses the same one; a bad value is refused with a message naming the option
 * before anything is set up.
 *
 * @param prefills          prefill ranks (ranks {@code 0..prefills-1})
 * @param decodes           decode ranks (the ranks after them); with several, each holds its share of the heads
 * @param layers            transformer layers
 * @param kvHeads           the model's KV heads (prefill ranks hold all of them)
 * @param headDim           elements (bf16) per head
 * @param blockTokens       tokens per block of the prefill pools
 * @param decodeBlockTokens tokens per block of the decode pools (mixed block sizes when it differs)
 * @param requests          requests each prefill rank sends
 * @param minTokens         the shortest prompt
 * @param maxTokens         the longest prompt
 * @param batch             requests a prefill rank computes together, layer by layer
 * @param decodeHold        how long decode keeps a request's blocks after checking them (a decode slower than prefill)
 * @param decodeCapacity    decode's pool, in prompts of the longest length
 * @param path              how the KV transfer moves data
 * @param deadline          each request's deadline
 * @param seed              prompt lengths and block tables
 */
record PipelineOptions(int prefills, int decodes, int layers, int kvHeads, int headDim, int blockTokens,
                       int decodeBlockTokens, int requests, int minTokens, int maxTokens, int batch, Duration decodeHold,
                       int decodeCapacity, KvPathKind path, Duration deadline, long seed) {

    static final String USAGE = """
            usage: KvCachePipeline [options]   (under jccl's launcher, --nproc = prefill + decode ranks; without it,
                                                every rank runs in this process)
              --topology PxD      1P1D, 2P1D, 1P2D, or any nP1D / 1PnD: prefill and decode ranks; with several decode
                                  ranks each request goes to all of them, each holding its share of the heads
                                  (decode TP = n x prefill TP); default 1P1D
              --model M           llama3-8b (32 layers, 8 KV heads, head dim 128, 16-token blocks, bf16) or small
                                  (4 layers, 4 KV heads, head dim 32, 16-token blocks); default: llama3-8b on GPUs,
                                  small on the host backend
              --layers N, --kv-heads N, --head-dim N, --block-tokens N
                                  change the model's shape
              --decode-block-tokens N
                                  decode's tokens per block (mixed block sizes); default: prefill's
              --requests N        requests per prefill rank; default 8
              --tokens A-B | N    prompt lengths, drawn per request; default 1024-4096 (llama3-8b), 16-160 (small)
              --batch N           requests a prefill rank computes together, layer by layer; default 4
              --decode-hold-ms N  decode keeps each request's blocks N ms after checking them (a slower decode:
                                  prefill waits for blocks, shown as 'waited'); default 0
              --decode-capacity N decode's pool holds N prompts of the longest length; default 2 batches of every
                                  prefill rank
              --path P            auto, lsa_kernel, copy, put_signal or send_recv; default auto
              --deadline-s N      each request's deadline; default 60
              --seed N            prompt lengths and block tables; default 42
              -h, --help          this text
            """;

    private static final Pattern TOPOLOGY = Pattern.compile("(\\d+)P(\\d+)D");
    private static final Pattern RANGE = Pattern.compile("(\\d+)(?:-(\\d+))?");

    /** The KV heads' element type: every row is then a whole number of 4-byte words when the head dim is even. */
    static final DataType TYPE = DataType.BFLOAT16;

    /** How many ranks the topology needs. */
    int ranks() {
        return prefills + decodes;
    }

    boolean isPrefill(int rank) {
        return rank < prefills;
    }

    /** The KV heads a decode rank holds: all of them, or its share when several decode ranks split them. */
    int decodeHeads() {
        return kvHeads / decodes;
    }

    /** Requests each decode rank receives: every prefill rank's, split or not. */
    int requestsPerDecodeRank() {
        return decodes == 1 ? prefills * requests : requests;
    }

    /** A prefill rank's pool: two batches of the longest prompt, so that one batch computes while the other drains. */
    KvLayout prefillLayout() {
        int blocks = 2 * batch * ceilDiv(maxTokens, blockTokens);
        return layout(blocks, blockTokens, kvHeads, 0);
    }

    /** Decode rank {@code index}'s pool (0 for the first decode rank): its heads, {@link #decodeCapacity} prompts. */
    KvLayout decodeLayout(int index) {
        int blocks = decodeCapacity * ceilDiv(maxTokens, decodeBlockTokens);
        return layout(blocks, decodeBlockTokens, decodeHeads(), index * decodeHeads());
    }

    private KvLayout layout(int blocks, int tokensPerBlock, int heads, int headOffset) {
        return KvLayout.builder().layers(layers).tensors(2).blocks(blocks).tokensPerBlock(tokensPerBlock).kvHeads(heads)
                .headOffset(headOffset).headDim(headDim).type(TYPE).build();
    }

    static int ceilDiv(int a, int b) {
        return (a + b - 1) / b;
    }

    /** Bytes of K and V of one token, every layer, on a prefill rank. */
    long bytesPerToken() {
        return 2L * layers * kvHeads * headDim * TYPE.size();
    }

    /**
     * Parses {@code args}; the model's defaults are the small shape when {@code onGpus} is false.
     *
     * @throws IllegalArgumentException naming the option and the value it refuses
     */
    static PipelineOptions parse(String[] args, boolean onGpus) {
        int prefills = 1;
        int decodes = 1;
        String model = onGpus ? "llama3-8b" : "small";
        Integer layers = null;
        Integer kvHeads = null;
        Integer headDim = null;
        Integer blockTokens = null;
        Integer decodeBlockTokens = null;
        int requests = 8;
        int[] tokens = null;
        int batch = 4;
        int holdMs = 0;
        Integer capacity = null;
        KvPathKind path = KvPathKind.AUTO;
        int deadlineSeconds = 60;
        long seed = 42;
        for (int i = 0; i < args.length; i++) {
            String option = args[i];
            switch (option) {
                case "--topology" -> {
                    String v = value(args, ++i, option);
                    Matcher m = TOPOLOGY.matcher(v.toUpperCase(Locale.ROOT));
                    if (!m.matches()) {
                        throw new IllegalArgumentException("--topology must look like 1P1D, 2P1D or 1P2D, not '" + v + "'");
                    }
                    prefills = Integer.parseInt(m.group(1));
                    decodes = Integer.parseInt(m.group(2));
                    if (prefills < 1 || decodes < 1 || (prefills > 1 && decodes > 1)) {
                        throw new IllegalArgumentException("--topology " + v + ": one side must be a single rank, the other"
                                + " at least one (nP1D: several prefill ranks into one decode rank; 1PnD: one prefill rank"
                                + " into n decode ranks that split the heads)");
                    }
                }
                case "--model" -> model = oneOf(value(args, ++i, option), option, "llama3-8b", "small");
                case "--layers" -> layers = positive(args, ++i, option);
                case "--kv-heads" -> kvHeads = positive(args, ++i, option);
                case "--head-dim" -> headDim = positive(args, ++i, option);
                case "--block-tokens" -> blockTokens = positive(args, ++i, option);
                case "--decode-block-tokens" -> decodeBlockTokens = positive(args, ++i, option);
                case "--requests" -> requests = positive(args, ++i, option);
                case "--tokens" -> tokens = range(value(args, ++i, option), option);
                case "--batch" -> batch = positive(args, ++i, option);
                case "--decode-hold-ms" -> holdMs = notNegative(args, ++i, option);
                case "--decode-capacity" -> capacity = positive(args, ++i, option);
                case "--path" -> path = path(value(args, ++i, option));
                case "--deadline-s" -> deadlineSeconds = positive(args, ++i, option);
                case "--seed" -> seed = whole(args, ++i, option);
                case "-h", "--help" -> throw new IllegalArgumentException("");
                default -> throw new IllegalArgumentException("unknown option '" + option + "'");
            }
        }
        boolean llama = model.equals("llama3-8b");
        int l = layers != null ? layers : llama ? 32 : 4;
        int heads = kvHeads != null ? kvHeads : llama ? 8 : 4;
        int dim = headDim != null ? headDim : llama ? 128 : 32;
        int tpb = blockTokens != null ? blockTokens : 16;
        int decodeTpb = decodeBlockTokens != null ? decodeBlockTokens : tpb;
        if (tokens == null) tokens = llama ? new int[] {1024, 4096} : new int[] {16, 160};
        if (dim % 2 != 0) {
            throw new IllegalArgumentException("--head-dim must be even (each head's bf16 row is checked in 4-byte words),"
                    + " not " + dim);
        }
        if (heads % decodes != 0) {
            throw new IllegalArgumentException(decodes + " decode ranks split the heads evenly: --kv-heads " + heads
                    + " is not a multiple of " + decodes);
        }
        int cap = capacity != null ? capacity : 2 * batch * prefills;
        return new PipelineOptions(prefills, decodes, l, heads, dim, tpb, decodeTpb, requests, tokens[0], tokens[1], batch,
                Duration.ofMillis(holdMs), cap, path, Duration.ofSeconds(deadlineSeconds), seed);
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) throw new IllegalArgumentException(option + " needs a value");
        return args[i];
    }

    private static long whole(String[] args, int i, String option) {
        String v = value(args, i, option);
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " needs a whole number, not '" + v + "'");
        }
    }

    private static int notNegative(String[] args, int i, String option) {
        long v = whole(args, i, option);
        if (v < 0 || v > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(option + " must be 0 or more (at most " + Integer.MAX_VALUE + "), not " + v);
        }
        return (int) v;
    }

    private static int positive(String[] args, int i, String option) {
        long v = whole(args, i, option);
        if (v <= 0 || v > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(option + " must be 1 or more (at most " + Integer.MAX_VALUE + "), not " + v);
        }
        return (int) v;
    }

    /** {@code A-B} (lengths drawn between them) or {@code N} (every prompt that long). */
    private static int[] range(String v, String option) {
        Matcher m = RANGE.matcher(v);
        if (!m.matches()) throw new IllegalArgumentException(option + " must be a length N or a range A-B, not '" + v + "'");
        try {
            int from = Integer.parseInt(m.group(1));
            int to = m.group(2) == null ? from : Integer.parseInt(m.group(2));
            if (from < 1 || to < from) {
                throw new IllegalArgumentException(option + " " + v + ": lengths must be at least 1 and A no more than B");
            }
            return new int[] {from, to};
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " " + v + ": a length is too large");
        }
    }

    private static String oneOf(String v, String option, String... allowed) {
        for (String a : allowed) if (a.equalsIgnoreCase(v)) return a;
        throw new IllegalArgumentException(option + " must be one of " + String.join(", ", allowed) + ", not '" + v + "'");
    }

    private static KvPathKind path(String v) {
        for (KvPathKind k : KvPathKind.values()) {
            if (k.name().equalsIgnoreCase(v.replace('-', '_'))) return k;
        }
        throw new IllegalArgumentException("--path must be one of auto, lsa_kernel, copy, put_signal, send_recv, not '" + v + "'");
    }

    /** One line for the log: the topology, the model and the run. */
    String describe() {
        return prefills + "P" + decodes + "D, " + layers + " layers x K,V x " + kvHeads + " KV heads x head dim " + headDim
                + " (bf16), " + blockTokens + "-token blocks" + (decodeBlockTokens != blockTokens ? " on prefill, "
                + decodeBlockTokens + " on decode" : "") + (decodes > 1 ? ", heads split " + decodes + " ways on decode" : "")
                + "; " + requests + " requests per prefill rank of " + (minTokens == maxTokens ? minTokens + " tokens"
                : minTokens + "-" + maxTokens + " tokens") + ", batches of " + batch + "; decode holds blocks "
                + decodeHold.toMillis() + " ms, its pool holds " + decodeCapacity + " of the longest prompts; path " + path;
    }
}
