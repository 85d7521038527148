package org.jccl.core;

/**
 * Properties of one device.
 *
 * @param index             the device number
 * @param name              e.g. {@code NVIDIA H200}
 * @param totalMemory       bytes of device memory
 * @param computeMajor      compute capability (CUDA) or GCN/CDNA major (HIP); 0 for the host
 * @param computeMinor      the minor part
 * @param multiprocessors   streaming multiprocessors (compute units)
 * @param pciBusId          e.g. {@code 0000:19:00.0}; empty for the host
 */
public record DeviceInfo(int index, String name, long totalMemory, int computeMajor, int computeMinor,
                         int multiprocessors, String pciBusId) {
}
