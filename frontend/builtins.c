/* builtins.c -- the built-in systems, written in ODL like a user's file.
 *
 * Each constant carries the source it comes from.  `oraclec --list-systems`
 * prints this text; `--system NAME` parses it exactly as it parses a file,
 * so a user can copy a built-in, edit it and pass the file instead. */
#include "frontend/frontend.h"

#include <string.h>

/* A newcomer's first answer is for the hardware and software people train
 * on now: a DGX H100 under PyTorch 2 (its implementation, pytorch-2).  The
 * ParaDL papers' platform, abci (Chainer 7 on 16 GB V100s), is one flag
 * away: --system abci. */
const char *const default_system = "dgx-h100";

static const Builtin builtin[] = {
	{ "abci",
	  "// ABCI (AIST), the platform of the ParaDL papers (Kahira et al., HPDC'21,\n"
	  "// and the tech report), as the authors ran it: Chainer 7, ChainerMN,\n"
	  "// NCCL 2.3.5, Open MPI 2.1.6, CUDA 9.0.  Hardware from the tech report.\n"
	  "system abci {\n"
	  "    implementation = \"chainermn-paradl\"; // the software of these runs\n"
	  "    gpu = \"V100-SXM2-16GB\";\n"
	  "    compute_capability = 7.0; // CUDA C++ Programming Guide, table of\n"
	  "                                // compute capabilities: Volta\n"
	  "    fp32 = 15.7TFLOPS;          // NVIDIA V100 datasheet, SXM2\n"
	  "    fp16 = 125TFLOPS;           // tensor cores, V100 datasheet\n"
	  "    memory = 16GiB;             // HBM2, V100 datasheet\n"
	  "    memory_bw = 900GB/s;        // V100 datasheet\n"
	  "    gpus_per_node = 4;          // 4 x V100 per node (tech report)\n"
	  "    intra = \"nvlink\";\n"
	  "    intra_bw = 50GB/s;          // 2 NVLink-2 bricks per GPU pair (tech report, "
	  "ParaDL)\n"
	  "    intra_latency = 9us;        // ParaDL INTRA_CABLE_LAT (arXiv 1903.04611)\n"
	  "    nic_bw = 7GB/s;             // effective: NCCL 2.3 runs a ring over one of the\n"
	  "                                // 2 EDR rails (12.5 GB/s) per node, through the\n"
	  "                                // PCIe Gen3 switches (GPU-Direct RDMA over PLX),\n"
	  "                                // reaching ~55% of it (nccl-tests busbw on such\n"
	  "                                // nodes); the 2-node runs imply the same\n"
	  "    nic_latency = 10us;         // one ring step between nodes: NCCL over IB\n"
	  "                                // (nccl-tests small-message latency)\n"
	  "    tree = false;               // NCCL 2.3 has ring collectives only (trees: 2.4)\n"
	  "    level leaf  { fanout = 17; latency = 90ns;  oversubscription = 1; }\n"
	  "    level rack  { fanout = 2;  latency = 90ns;  oversubscription = 3; }\n"
	  "                                // full bisection in a rack, 1:3 between racks\n"
	  "    level spine { fanout = 0;  latency = 400ns; oversubscription = 1; }\n"
	  "                                // switch latencies: tech report (IB data sheets)\n"
	  "    storage_bw = 12.5GB/s;      // GPFS over one EDR link per node\n"
	  "    fs_file_rate = 14000;       // JPEG files (~110 KB) GPFS serves the job per\n"
	  "                                // second; fitted with cache_files on the 12\n"
	  "                                // data rows of validation/abci-measured.csv\n"
	  "                                // (grid 6k-22k x 5k-20k: best 14k-16k x 7k-8.5k)\n"
	  "    cache_files = 8500;         // files a node keeps between epochs: 8,500 x\n"
	  "                                // 110 KB = 0.94 GB, GPFS's 1 GiB default pagepool\n"
	  "    cpu_cores = 40;             // 2 x Xeon Gold 6148 (20 cores each); each GPU's\n"
	  "                                // process decodes with its 10 cores\n"
	  "    eff_conv = 0.87;            // cuDNN 7 FP32 convolutions on V100 and\n"
	  "    eff_gemm = 0.98;            // cuBLAS SGEMM, their tiles' main loops: oraclec\n"
	  "                                // calibrate's compute factor on the shared\n"
	  "                                // ABCI runs, refitted when batch norm's 3 and\n"
	  "                                // 5 passes came in, again (x0.95) when the\n"
	  "                                // backward's element-wise bytes became\n"
	  "                                // autograd's, and (x1.10) when the tiles ran in\n"
	  "                                // waves over the SMs (sms, tile_overhead)\n"
	  "    eff_gemm_fp16 = 0.891;      // 16-bit GEMMs: the tile model's u that gives\n"
	  "                                // 101 of 113 TFLOP/s at 8192^3, cuBLAS on a V100\n"
	  "                                // PCIe at 1.38 GHz (NVIDIA developer forums,\n"
	  "                                // \"Understanding IPC and issue slot utilization\n"
	  "                                // when using Tensor Cores\", t/79781)\n"
	  "    eff_conv_fp16 = 0.725;      // 16-bit convolutions on the tensor cores: the\n"
	  "                                // u that fits DeepBench's V100 convolutions\n"
	  "                                // of training layers' size (DGX-1, cuDNN\n"
	  "                                // 7.6.2, NHWC; tests/test_deepbench)\n"
	  "    eff_memory = 0.8;           // STREAM-like kernels reach ~720 of 900 GB/s\n"
	  "    kernel_latency = 5us;       // launch and tail of one CUDA kernel\n"
	  "    sms = 80;                   // V100 datasheet\n"
	  "    tile_overhead = 17;         // a tile's steps outside its main loop: NeuSight's\n"
	  "                                // V100 microbenchmarks (tests/data/kernels)\n"
	  "    reserved = 1GiB;            // CUDA context, cuDNN workspace, allocator slack\n"
	  "    gpu_spread = 0.015;         // one GPU's sustained speed against its cluster's:\n"
	  "                                // 8 % average variation, the box plot's whisker\n"
	  "                                // span 4 IQR over the median (the SC'22 artifact's\n"
	  "                                // plot_script), over V100 clusters Summit, Vortex\n"
	  "                                // and Longhorn (Sinha et al., SC'22, 'Not All GPUs\n"
	  "                                // Are Created Equal'); a normal's 4 IQR is 5.40 sigma\n"
	  "}\n" },
	{ "thetagpu",
	  "// ThetaGPU (ALCF): NVIDIA DGX A100 nodes, 8 x A100-SXM4-40GB, NVSwitch,\n"
	  "// 8 x HDR InfiniBand for compute traffic.  PyTorch + NCCL 2.x.\n"
	  "system thetagpu {\n"
	  "    gpu = \"A100-SXM4-40GB\";\n"
	  "    compute_capability = 8.0; // CUDA C++ Programming Guide, table of\n"
	  "                                // compute capabilities: Ampere\n"
	  "    fp32 = 19.5TFLOPS;          // A100 datasheet (without TF32)\n"
	  "    tf32 = 156TFLOPS;           // tensor cores, dense, A100 datasheet\n"
	  "    fp16 = 312TFLOPS;           // tensor cores, dense, A100 datasheet\n"
	  "    bf16 = 312TFLOPS;\n"
	  "    memory = 40GB;              // HBM2, A100 datasheet\n"
	  "    memory_bw = 1555GB/s;       // A100 40GB datasheet\n"
	  "    gpus_per_node = 8;          // DGX A100\n"
	  "    intra = \"nvswitch\";\n"
	  "    intra_bw = 300GB/s;         // NVLink 3: 600 GB/s bidirectional per GPU\n"
	  "    intra_latency = 5us;        // NCCL step over NVSwitch\n"
	  "    nic_bw = 200GB/s;           // 8 x HDR 200 Gb/s (25 GB/s each), DGX A100 guide\n"
	  "    nic_latency = 8us;          // NCCL step over HDR InfiniBand\n"
	  "    tree = true;                // NCCL >= 2.4 double binary trees\n"
	  "    level leaf  { fanout = 8;  latency = 130ns; oversubscription = 1; }\n"
	  "    level spine { fanout = 0;  latency = 130ns; oversubscription = 1; }\n"
	  "                                // HDR QM8700 switches, ~130 ns port to port\n"
	  "    storage_bw = 25GB/s;        // 2 x HDR storage links per DGX A100\n"
	  "    cpu_cores = 128;            // 2 x AMD EPYC 7742\n"
	  "    eff_conv = 0.75;            // cuDNN FP32 convolutions\n"
	  "    eff_gemm = 0.9;             // cuBLAS SGEMM\n"
	  "    eff_memory = 0.85;          // STREAM-like kernels\n"
	  "    kernel_latency = 4us;\n"
	  "    sms = 108;                  // A100 datasheet\n"
	  "    tile_overhead = 5;          // a tile's steps outside its main loop: NeuSight's\n"
	  "                                // A100 microbenchmarks (tests/data/kernels)\n"
	  "    reserved = 1.5GiB;          // CUDA context, cuDNN workspace, caching allocator\n"
	  "    gpu_spread = 0.015;         // one GPU's sustained speed against its cluster's:\n"
	  "                                // abci's V100 figure (Sinha et al., SC'22), who\n"
	  "                                // found it on every GPU they measured (V100,\n"
	  "                                // Quadro RTX 5000, MI60); no A100 figure\n"
	  "}\n" },
	{ "dgx-a100",
	  "// NVIDIA DGX A100 (80 GB), 8 x A100-SXM4-80GB, NVSwitch, 8 x HDR.\n"
	  "system dgx_a100 {\n"
	  "    gpu = \"A100-SXM4-80GB\";\n"
	  "    compute_capability = 8.0; // CUDA C++ Programming Guide, table of\n"
	  "                                // compute capabilities: Ampere\n"
	  "    fp32 = 19.5TFLOPS;          // A100 datasheet\n"
	  "    tf32 = 156TFLOPS;           // tensor cores, dense\n"
	  "    fp16 = 312TFLOPS;           // tensor cores, dense\n"
	  "    bf16 = 312TFLOPS;\n"
	  "    memory = 80GB;              // HBM2e\n"
	  "    memory_bw = 2039GB/s;       // A100 80GB SXM datasheet\n"
	  "    gpus_per_node = 8;\n"
	  "    intra = \"nvswitch\";\n"
	  "    intra_bw = 300GB/s;         // NVLink 3, per direction\n"
	  "    intra_latency = 5us;\n"
	  "    nic_bw = 200GB/s;           // 8 x HDR 200 Gb/s\n"
	  "    nic_latency = 8us;\n"
	  "    tree = true;\n"
	  "    level leaf  { fanout = 20; latency = 130ns; oversubscription = 1; }\n"
	  "                                // DGX SuperPOD: 20 nodes per scalable unit\n"
	  "    level spine { fanout = 0;  latency = 130ns; oversubscription = 1; }\n"
	  "    storage_bw = 25GB/s;\n"
	  "    cpu_cores = 128;            // 2 x AMD EPYC 7742\n"
	  "    eff_conv = 0.75;\n"
	  "    eff_gemm = 0.9;\n"
	  "    eff_gemm_fp16 = 0.851;      // 16-bit GEMMs on the tensor cores: the u with\n"
	  "    eff_gemm_bf16 = 0.851;      // which the tile model gives 271.2 of 312 TFLOP/s\n"
	  "                                // at 1024x10240x5120, the best shape\n"
	  "                                // mamf-finder.py found on an A100 SXM (torch\n"
	  "                                // 2.6.0+cu126; stas00/ml-engineering,\n"
	  "                                // compute/accelerator/README.md, 'Maximum\n"
	  "                                // Achievable Matmul FLOPS'; docs/model.md)\n"
	  "    eff_memory = 0.85;\n"
	  "    kernel_latency = 4us;\n"
	  "    sms = 108;                  // A100 datasheet\n"
	  "    tile_overhead = 5;          // a tile's steps outside its main loop: NeuSight's\n"
	  "                                // A100 microbenchmarks (tests/data/kernels)\n"
	  "    reserved = 1.5GiB;\n"
	  "    gpu_spread = 0.015;         // one GPU's sustained speed against its cluster's:\n"
	  "                                // abci's V100 figure (Sinha et al., SC'22), who\n"
	  "                                // found it on every GPU they measured (V100,\n"
	  "                                // Quadro RTX 5000, MI60); no A100 figure\n"
	  "}\n" },
	{ "dgx-1",
	  "// NVIDIA DGX-1 with V100 (16 GB): 8 x V100-SXM2-16GB in NVLink's hybrid\n"
	  "// cube-mesh, 4 x EDR InfiniBand.  PyTorch + NCCL 2.x (NGC containers).\n"
	  "// Topology and links: the DGX-1 with Tesla V100 system architecture\n"
	  "// white paper (WP-08437-002); the GPU: the V100 datasheet.\n"
	  "system dgx_1 {\n"
	  "    gpu = \"V100-SXM2-16GB\";\n"
	  "    compute_capability = 7.0; // CUDA C++ Programming Guide, table of\n"
	  "                                // compute capabilities: Volta\n"
	  "    fp32 = 15.7TFLOPS;          // V100 datasheet, SXM2\n"
	  "    fp16 = 125TFLOPS;           // tensor cores, V100 datasheet\n"
	  "    memory = 16GiB;             // HBM2\n"
	  "    memory_bw = 900GB/s;\n"
	  "    gpus_per_node = 8;\n"
	  "    intra = \"nvlink\";\n"
	  "    intra_bw = 75GB/s;          // the cube-mesh is three interwoven rings of\n"
	  "                                // single NVLinks (white paper): a collective's\n"
	  "                                // three rings, 25 GB/s each way each\n"
	  "    intra_latency = 9us;        // one NVLink-2 hop, as abci's\n"
	  "    nic_bw = 50GB/s;            // 4 x EDR 100 Gb/s (12.5 GB/s each)\n"
	  "    nic_latency = 10us;         // one ring step over EDR, as abci's\n"
	  "    tree = true;                // NCCL >= 2.4 double binary trees\n"
	  "    level leaf  { fanout = 4;  latency = 90ns;  oversubscription = 1; }\n"
	  "                                // 36-port EDR switches, half the ports down:\n"
	  "                                // 18 ports over 4 rails a node\n"
	  "    level spine { fanout = 0;  latency = 90ns;  oversubscription = 1; }\n"
	  "    storage_bw = 2GB/s;         // 4 x 1.92 TB SSD in RAID 0, the dataset cached\n"
	  "                                // there (DGX-1 user guide: /raid)\n"
	  "    cpu_cores = 40;             // 2 x Xeon E5-2698 v4 (20 cores each)\n"
	  "    eff_conv = 0.87;            // the V100's cuDNN convolutions and cuBLAS\n"
	  "    eff_gemm = 0.98;            // GEMM: abci's, calibrated on its V100s\n"
	  "    eff_gemm_fp16 = 0.891;      // abci's (cuBLAS on a V100, t/79781)\n"
	  "    eff_conv_fp16 = 0.725;      // abci's (DeepBench's V100 convolutions)\n"
	  "    eff_memory = 0.8;           // as abci's V100s\n"
	  "    kernel_latency = 5us;\n"
	  "    sms = 80;                   // V100 datasheet\n"
	  "    tile_overhead = 17;         // a tile's steps outside its main loop: NeuSight's\n"
	  "                                // V100 microbenchmarks (tests/data/kernels)\n"
	  "    reserved = 1GiB;\n"
	  "    gpu_spread = 0.015;         // abci's: the same V100s (Sinha et al., SC'22;\n"
	  "                                // docs/model.md, 'The slowest of N')\n"
	  "}\n" },
	{ "dgx-h100",
	  "// NVIDIA DGX H100, 8 x H100-SXM5-80GB, NVSwitch (NVLink 4), 8 x NDR.\n"
	  "system dgx_h100 {\n"
	  "    gpu = \"H100-SXM5-80GB\";\n"
	  "    compute_capability = 9.0; // CUDA C++ Programming Guide, table of\n"
	  "                                // compute capabilities: Hopper\n"
	  "    nvls = true;                // third-generation NVSwitch reduces\n"
	  "                                // (NVLink SHARP: DGX H100 user guide)\n"
	  "    fp32 = 67TFLOPS;            // H100 SXM datasheet\n"
	  "    tf32 = 494.7TFLOPS;         // tensor cores, dense (989 with sparsity)\n"
	  "    fp16 = 989TFLOPS;           // tensor cores, dense\n"
	  "    bf16 = 989TFLOPS;\n"
	  "    fp8 = 1979TFLOPS;           // tensor cores, dense (3,958 with sparsity)\n"
	  "    memory = 80GB;              // HBM3\n"
	  "    memory_bw = 3350GB/s;       // H100 SXM datasheet\n"
	  "    gpus_per_node = 8;\n"
	  "    intra = \"nvswitch\";\n"
	  "    intra_bw = 450GB/s;         // NVLink 4: 900 GB/s bidirectional per GPU\n"
	  "    intra_latency = 4us;\n"
	  "    nic_bw = 400GB/s;           // 8 x NDR 400 Gb/s (50 GB/s each)\n"
	  "    nic_latency = 6us;\n"
	  "    tree = true;\n"
	  "    implementation = \"pytorch-2\"; // what H100 users run (PyTorch 2.x)\n"
	  "    level leaf  { fanout = 32; latency = 130ns; oversubscription = 1; }\n"
	  "                                // DGX H100 SuperPOD: 32 nodes per scalable unit\n"
	  "    level spine { fanout = 0;  latency = 130ns; oversubscription = 1; }\n"
	  "    storage_bw = 50GB/s;\n"
	  "    cpu_cores = 112;            // 2 x Xeon Platinum 8480C\n"
	  "    eff_conv = 0.64921875;      // FP32 products on the CUDA cores: the main\n"
	  "    eff_gemm = 0.865625;        // loop's share before the issue limit of its\n"
	  "                                // 128-lane SMs (model/kernel.c, x 64 / 69.25):\n"
	  "                                // 0.6 and 0.8 of the fp32 peak in all\n"
	  "    eff_conv_tf32 = 0.6;        // the tensor cores' (no issue limit): the\n"
	  "    eff_conv_fp16 = 0.6;        // fp32 shares they took before the limit\n"
	  "    eff_conv_bf16 = 0.6;        // was priced\n"
	  "    eff_gemm_tf32 = 0.8;\n"
	  "    eff_gemm_fp16 = 0.803;      // 16-bit GEMMs: the tile model's u that gives\n"
	  "    eff_gemm_bf16 = 0.803;      // 794.5 of 989 TFLOP/s at 2048x2048x13312,\n"
	  "                                // mamf-finder.py's best shape on an H100 SXM\n"
	  "                                // (torch 2.7.0+cu126; stas00/ml-engineering,\n"
	  "                                // compute/accelerator/README.md)\n"
	  "    eff_memory = 0.85;\n"
	  "    eff_norm_nchw = 0.56;       // cuDNN's NCHW batch norm kernels on an H100:\n"
	  "                                // ResNet-50's 53, TF32, batch 128, 8 passes of\n"
	  "                                // 5.69 GB in 24.4 ms a step, 1.87 TB/s\n"
	  "                                // (validation/h100/profile_resnet50_tf32.txt)\n"
	  "    kernel_latency = 3us;\n"
	  "    sms = 132;                  // H100 SXM5 datasheet\n"
	  "    tile_overhead = 36;         // NeuSight's H100 microbenchmarks "
	  "(tests/data/kernels)\n"
	  "    reserved = 2GiB;\n"
	  "    gpu_spread = 0.015;         // one GPU's sustained speed against its cluster's:\n"
	  "                                // abci's V100 figure (Sinha et al., SC'22), who\n"
	  "                                // found it on every GPU they measured (V100,\n"
	  "                                // Quadro RTX 5000, MI60); no H100 figure\n"
	  "}\n" },
};

/* True when name is built-in name b, '_' standing for '-' (the ODL
 * identifier a built-in's block is written with: dgx_a100). */
bool
builtin_same_name(const char *b, const char *name)
{
	for (; *b && (*b == *name || (*b == '-' && *name == '_')); b++, name++)
		;
	return !*b && !*name;
}

const Builtin *
builtin_lookup(const Builtin *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (builtin_same_name(t[i].name, name))
			return &t[i];
	return NULL;
}

const char *
builtin_system(const char *name)
{
	const Builtin *b = builtin_lookup(builtin, sizeof builtin / sizeof builtin[0], name);

	return b ? b->text : NULL;
}

const char *
builtin_system_canonical(const char *name)
{
	const Builtin *b = builtin_lookup(builtin, sizeof builtin / sizeof builtin[0], name);

	return b ? b->name : NULL;
}

const char *
builtin_system_name(int i)
{
	return i >= 0 && (size_t)i < sizeof builtin / sizeof builtin[0] ? builtin[i].name : NULL;
}
