package org.jccl.device;

import org.jccl.core.error.InvalidArgumentException;

/**
 * A kernel launch's shape: grid and block dimensions and dynamic shared memory. Checked here for what every device
 * refuses, and against the kernel and device at launch.
 *
 * @param gridX       blocks in x (up to 2^31 - 1)
 * @param gridY       blocks in y (up to 65535)
 * @param gridZ       blocks in z (up to 65535)
 * @param blockX      threads per block in x (up to 1024)
 * @param blockY      threads per block in y (up to 1024)
 * @param blockZ      threads per block in z (up to 64)
 * @param sharedBytes dynamic shared memory per block
 */
public record LaunchConfig(int gridX, int gridY, int gridZ, int blockX, int blockY, int blockZ, int sharedBytes) {
    public LaunchConfig {
        positive("gridX", gridX, Integer.MAX_VALUE);
        positive("gridY", gridY, 65535);
        positive("gridZ", gridZ, 65535);
        positive("blockX", blockX, 1024);
        positive("blockY", blockY, 1024);
        positive("blockZ", blockZ, 64);
        if ((long) blockX * blockY * blockZ > 1024) {
            throw new InvalidArgumentException("a block has at most 1024 threads, not " + blockX + "x" + blockY + "x" + blockZ);
        }
        if (sharedBytes < 0) throw new InvalidArgumentException("sharedBytes must not be negative: " + sharedBytes);
    }

    /** A one-dimensional launch without dynamic shared memory. */
    public static LaunchConfig of(int blocks, int threadsPerBlock) {
        return new LaunchConfig(blocks, 1, 1, threadsPerBlock, 1, 1, 0);
    }

    /** The same launch with {@code bytes} of dynamic shared memory per block. */
    public LaunchConfig withSharedBytes(int bytes) {
        return new LaunchConfig(gridX, gridY, gridZ, blockX, blockY, blockZ, bytes);
    }

    public int threadsPerBlock() {
        return blockX * blockY * blockZ;
    }

    int[] dims() {
        return new int[] {gridX, gridY, gridZ, blockX, blockY, blockZ};
    }

    private static void positive(String name, int value, int max) {
        if (value < 1 || value > max) throw new InvalidArgumentException(name + " must be 1.." + max + ", not " + value);
    }

    @Override
    public String toString() {
        return "grid=" + gridX + "x" + gridY + "x" + gridZ + " block=" + blockX + "x" + blockY + "x" + blockZ
                + (sharedBytes > 0 ? " shared=" + sharedBytes : "");
    }
}
