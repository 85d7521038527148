package org.jccl.core.nccl;

import org.jccl.core.BackendKind;
import org.jccl.core.error.Errors;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jccl.core.spi.CommProperties;
import org.jccl.core.spi.DevCommHandle;
import org.jccl.core.spi.DevCommRequirements;
import org.jccl.core.spi.DeviceCommSupport;
import org.jccl.core.spi.Feature;

/**
 * The device API's host calls for one {@code ncclComm_t}: {@code ncclCommQueryProperties},
 * {@code ncclDevCommCreate} and {@code ncclDevCommDestroy}, with their structures laid out for the loaded version by
 * {@link DeviceApiLayout}.
 */
final class NcclDeviceComms implements DeviceCommSupport {
    private final NcclComm comm;
    private final NativeLibrary lib;

    NcclDeviceComms(NcclComm comm) {
        this.comm = comm;
        this.lib = comm.library();
    }

    /** {@code ncclCommQueryProperties} with the structure laid out for the loaded version. */
    @Override
    public CommProperties queryProperties() {
        lib.features.require(Feature.COMM_QUERY_PROPERTIES);
        byte[] properties = DeviceApiLayout.emptyProperties(lib.version);
        comm.check(NativeApi.jn_comm_query_properties(lib.ctx, comm.handle(), properties), "ncclCommQueryProperties");
        return DeviceApiLayout.properties(properties);
    }

    /**
     * {@code ncclDevCommCreate} into native memory the handle owns. Inside a group NCCL writes the device communicator
     * at the group's end; outside one, a non-blocking communicator finishes it in the background, which is waited out
     * as for windows.
     */
    @Override
    public DevCommHandle devCommCreate(DevCommRequirements requirements) {
        lib.features.require(Feature.DEV_COMM_CREATE);
        if (lib.kind == BackendKind.RCCL) {
            // jccl lays the structures out from NCCL's headers and has checked them against no RCCL build.
            throw new UnsupportedFeatureException("ncclDevCommCreate", lib.ncclPath + " (RCCL's device-communicator layout is"
                    + " not verified by jccl)", lib.features.version(), null);
        }
        NcclDevComm devComm = new NcclDevComm(DeviceApiLayout.requirements(requirements, lib.version, lib.features.library()),
                lib.version);
        try {
            int code = NativeApi.jn_dev_comm_create(lib.ctx, comm.handle(), devComm.requirementsAddress(), devComm.devCommAddress());
            if (comm.nonBlocking() && !comm.driver().inGroup() && (code == Errors.SUCCESS || code == Errors.IN_PROGRESS)) {
                comm.awaitNotInProgress("ncclDevCommCreate");
            } else {
                comm.driver().finish(comm, code, "ncclDevCommCreate");
            }
            return devComm;
        } catch (RuntimeException e) {
            devComm.free();
            throw e;
        }
    }

    @Override
    public void devCommDestroy(DevCommHandle devComm) {
        lib.features.require(Feature.DEV_COMM_DESTROY);
        comm.complete(NativeApi.jn_dev_comm_destroy(lib.ctx, comm.handle(), ((NcclDevComm) devComm).devCommAddress()), "ncclDevCommDestroy");
    }
}
