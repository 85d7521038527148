package org.jccl.core;

/**
 * The fields of {@code ncclConfig_t}, with the NCCL version that introduced each. A field the loaded library does
 * not know is rejected when a communicator is created with it (an {@code UnsupportedFeatureException}), never
 * silently dropped.
 *
 * <p>The order is the members' order in the structure (it is append-only). The versions are those from which NCCL's
 * {@code parseCommConfig} honours each member (members a library reads from an older {@code version} are reset to
 * defaults); {@code commName} has no such gate and is listed from 2.23.
 */
public enum ConfigField {
    BLOCKING("blocking", false, 21400),
    CGA_CLUSTER_SIZE("cgaClusterSize", false, 21700),
    MIN_CTAS("minCTAs", false, 21700),
    MAX_CTAS("maxCTAs", false, 21700),
    NET_NAME("netName", true, 21700),
    SPLIT_SHARE("splitShare", false, 21800),
    TRAFFIC_CLASS("trafficClass", false, 22500),
    COMM_NAME("commName", true, 22300),
    COLLNET_ENABLE("collnetEnable", false, 22700),
    CTA_POLICY("CTAPolicy", false, 22700),
    SHRINK_SHARE("shrinkShare", false, 22700),
    NVLS_CTAS("nvlsCTAs", false, 22700),
    N_CHANNELS_PER_NET_PEER("nChannelsPerNetPeer", false, 22800),
    NVLINK_CENTRIC_SCHED("nvlinkCentricSched", false, 22800),
    GRAPH_USAGE_MODE("graphUsageMode", false, 22900),
    NUM_RMA_CTX("numRmaCtx", false, 22900);

    private final String cName;
    private final boolean string;
    private final int sinceVersion;

    ConfigField(String cName, boolean string, int sinceVersion) {
        this.cName = cName;
        this.string = string;
        this.sinceVersion = sinceVersion;
    }

    /** The member's name in {@code ncclConfig_t}. */
    public String cName() {
        return cName;
    }

    /** Whether the member is a string ({@code const char*}) rather than an {@code int}. */
    public boolean isString() {
        return string;
    }

    /** The first NCCL version (as {@code NCCL_VERSION_CODE}, e.g. 22300 for 2.23.0) that has this member. */
    public int sinceVersion() {
        return sinceVersion;
    }
}
