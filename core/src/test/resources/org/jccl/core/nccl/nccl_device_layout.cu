// Compiled by DeviceApiLayoutGpuTest with nvcc against the loaded NCCL's headers: prints the requirements jccl
// encoded (argv[1]) as the header reads them, and writes a device communicator (argv[2]) and, from 2.29, properties
// (argv[3]) with known values for jccl to decode.
#include <nccl.h>
#include <nccl_device.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  printf("version %d\n", NCCL_VERSION_CODE);
  ncclDevCommRequirements r;
  memset(&r, 0, sizeof r);
  FILE* in = fopen(argv[1], "rb");
  size_t got = fread(&r, 1, sizeof r, in);
  fclose(in);
  printf("requirementsSize %zu\nread %zu\n", sizeof r, got);
  printf("lsaMultimem %d\nbarrierCount %d\nlsaBarrierCount %d\nrailGinBarrierCount %d\n", (int) r.lsaMultimem,
         r.barrierCount, r.lsaBarrierCount, r.railGinBarrierCount);
  printf("lsaLLA2ABlockCount %d\nlsaLLA2ASlotCount %d\nginForceEnable %d\n", r.lsaLLA2ABlockCount, r.lsaLLA2ASlotCount,
         (int) r.ginForceEnable);
  printf("ginContextCount %d\nginSignalCount %d\nginCounterCount %d\n", r.ginContextCount, r.ginSignalCount, r.ginCounterCount);
#if NCCL_VERSION_CODE >= 22900
  printf("requirementsSizeField %zu\nginConnectionType %d\nginExclusiveContexts %d\nginQueueDepth %d\n", r.size,
         (int) r.ginConnectionType, (int) r.ginExclusiveContexts, r.ginQueueDepth);
#endif

  ncclDevComm d;
  memset(&d, 0, sizeof d);
  d.rank = 3;
  d.nRanks = 8;
  d.lsaRank = 1;
  d.lsaSize = 4;
  d.ginContextCount = 2;
  d.ginSignalCount = 5;
  d.ginCounterCount = 6;
  FILE* out = fopen(argv[2], "wb");
  fwrite(&d, 1, sizeof d, out);
  fclose(out);

#if NCCL_VERSION_CODE >= 22900
  ncclCommProperties_t p;
  memset(&p, 0, sizeof p);
  p.rank = 3;
  p.nRanks = 8;
  p.cudaDev = 1;
  p.nvmlDev = 2;
  p.deviceApiSupport = true;
  p.multimemSupport = false;
  p.ginType = NCCL_GIN_TYPE_PROXY;
  p.nLsaTeams = 5;
  p.hostRmaSupport = true;
  p.railedGinType = NCCL_GIN_TYPE_GDAKI;
  out = fopen(argv[3], "wb");
  fwrite(&p, 1, sizeof p, out);
  fclose(out);
#endif
  return 0;
}
