package org.jccl.device;

import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.spi.DevCommRequirements;

/**
 * What a device communicator must provide ({@code ncclDevCommRequirements}), built with {@link #builder()}. Every
 * count defaults to 0 and the GIN context hint to 4, as {@code NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER} has them. The
 * fields NCCL 2.29 added are refused on an older library; the rest are checked against the communicator's
 * {@link DeviceProperties} before anything is created.
 *
 * <pre>{@code
 * DeviceCommRequirements reqs = DeviceCommRequirements.builder().lsaBarrierCount(4).build();
 * }</pre>
 */
public final class DeviceCommRequirements {
    private final DevCommRequirements values;

    private DeviceCommRequirements(DevCommRequirements values) {
        this.values = values;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The values as core's driver takes them. */
    public DevCommRequirements values() {
        return values;
    }

    /** Whether any requirement needs GPU-initiated networking (GIN). */
    public boolean needsGin() {
        return values.ginForceEnable() || values.ginSignalCount() > 0 || values.ginCounterCount() > 0
                || values.railGinBarrierCount() > 0 || values.ginConnectionType() != 0;
    }

    @Override
    public String toString() {
        return values.toString().replace("DevCommRequirements", "DeviceCommRequirements");
    }

    /** GIN connections between ranks ({@code ncclGinConnectionType_t}, NCCL 2.29+). */
    public enum GinConnection {
        NONE, FULL, RAIL
    }

    /** Collects the requirements; {@link #build()} checks them. */
    public static final class Builder {
        private boolean lsaMultimem;
        private int barrierCount;
        private int lsaBarrierCount;
        private int railGinBarrierCount;
        private int lsaLLA2ABlockCount;
        private int lsaLLA2ASlotCount;
        private boolean ginForceEnable;
        private int ginContextCount = DevCommRequirements.DEFAULT_GIN_CONTEXTS;
        private int ginSignalCount;
        private int ginCounterCount;
        private GinConnection ginConnection = GinConnection.NONE;
        private boolean ginExclusiveContexts;
        private int ginQueueDepth;

        private Builder() {
        }

        /** Multimem (NVLink multicast) on the LSA team; never on machines where NVLS must stay off. */
        public Builder lsaMultimem(boolean on) {
            this.lsaMultimem = on;
            return this;
        }

        /** Barriers across every rank. */
        public Builder barrierCount(int n) {
            this.barrierCount = n;
            return this;
        }

        /** Barriers across the load/store-accessible team ({@code ncclLsaBarrierSession}), one per block that syncs. */
        public Builder lsaBarrierCount(int n) {
            this.lsaBarrierCount = n;
            return this;
        }

        /** GIN barriers across the rail team. */
        public Builder railGinBarrierCount(int n) {
            this.railGinBarrierCount = n;
            return this;
        }

        /** Low-latency all-to-all buffers on the LSA team: blocks, and slots per block. */
        public Builder lsaLowLatencyAllToAll(int blocks, int slots) {
            this.lsaLLA2ABlockCount = blocks;
            this.lsaLLA2ASlotCount = slots;
            return this;
        }

        /** Sets GIN up even where no other requirement needs it. */
        public Builder ginForceEnable(boolean on) {
            this.ginForceEnable = on;
            return this;
        }

        /** A hint: how many GIN contexts (the created communicator says how many it got). */
        public Builder ginContextCount(int n) {
            this.ginContextCount = n;
            return this;
        }

        /** GIN signals, numbered from 0. */
        public Builder ginSignalCount(int n) {
            this.ginSignalCount = n;
            return this;
        }

        /** GIN counters, numbered from 0. */
        public Builder ginCounterCount(int n) {
            this.ginCounterCount = n;
            return this;
        }

        /** GIN connection type (NCCL 2.29+). */
        public Builder ginConnection(GinConnection type) {
            this.ginConnection = type;
            return this;
        }

        /** GIN contexts not shared with other device communicators (NCCL 2.29+). */
        public Builder ginExclusiveContexts(boolean on) {
            this.ginExclusiveContexts = on;
            return this;
        }

        /** GIN queue depth; 0 for the library's (NCCL 2.29+). */
        public Builder ginQueueDepth(int depth) {
            this.ginQueueDepth = depth;
            return this;
        }

        /**
         * @throws InvalidArgumentException for a negative count, a GIN context hint below 1 or a null connection type
         */
        public DeviceCommRequirements build() {
            nonNegative("barrierCount", barrierCount);
            nonNegative("lsaBarrierCount", lsaBarrierCount);
            nonNegative("railGinBarrierCount", railGinBarrierCount);
            nonNegative("lsaLLA2ABlockCount", lsaLLA2ABlockCount);
            nonNegative("lsaLLA2ASlotCount", lsaLLA2ASlotCount);
            nonNegative("ginSignalCount", ginSignalCount);
            nonNegative("ginCounterCount", ginCounterCount);
            nonNegative("ginQueueDepth", ginQueueDepth);
            if (ginContextCount < 1) throw new InvalidArgumentException("ginContextCount must be at least 1: " + ginContextCount);
            if (ginConnection == null) throw new InvalidArgumentException("ginConnection must not be null");
            if ((lsaLLA2ABlockCount == 0) != (lsaLLA2ASlotCount == 0)) {
                throw new InvalidArgumentException("low-latency all-to-all needs both blocks and slots, or neither: "
                        + lsaLLA2ABlockCount + " blocks, " + lsaLLA2ASlotCount + " slots");
            }
            return new DeviceCommRequirements(new DevCommRequirements(lsaMultimem, barrierCount, lsaBarrierCount,
                    railGinBarrierCount, lsaLLA2ABlockCount, lsaLLA2ASlotCount, ginForceEnable, ginContextCount,
                    ginSignalCount, ginCounterCount, ginConnection.ordinal(), ginExclusiveContexts, ginQueueDepth));
        }

        private static void nonNegative(String name, int value) {
            if (value < 0) throw new InvalidArgumentException(name + " must not be negative: " + value);
        }
    }
}
