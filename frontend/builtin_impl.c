/* builtin_impl.c -- the built-in implementations, written in ODL with the
 * source of every value (docs/systems.md, "Implementations").  Per-sample
 * loader costs were measured with tools/measure_loader.py (Pillow with
 * libjpeg-turbo and torchvision 0.14 on an AMD EPYC core): a 97 KB,
 * 500 x 375 JPEG decoded, RandomResizedCrop(224), flipped, ToTensor and
 * Normalize in 1.98 ms (49 MB/s of JPEG); a 32 x 32 CIFAR image cropped,
 * flipped, ToTensor and Normalize in 62 us. */
#include "frontend/frontend.h"

#include <stddef.h>

const char *const default_implementation = "pytorch";

static const Builtin builtin[] = {
	{ "pytorch",
	  "// PyTorch eager with DistributedDataParallel on NCCL, a DataLoader per\n"
	  "// process (torchvision's reference training recipe).\n"
	  "implementation pytorch {\n"
	  "    framework = \"PyTorch (DDP, NCCL)\";\n"
	  "    dispatch = 10us;            // eager: per-operator CPU cost of the dispatcher\n"
	  "    library_call = 38us;        // a cuDNN call on top: 48 us per Conv2d call\n"
	  "                                // with cuDNN's v7 API (pytorch/pytorch PR 51390:\n"
	  "                                // 12.47 M instructions per 100 calls against\n"
	  "                                // v8's 13.59 M at 52 us), less the dispatch\n"
	  "    step_tensor = 0.7us;        // torch.optim's Python loop over the tensors\n"
	  "                                // (tools/host_costs.py: 0.6-1.3 us a tensor for\n"
	  "                                // SGD's foreach step, torch 1.13, EPYC; its\n"
	  "                                // zero_grad(set_to_none) loop 0.12 us, left out)\n"
	  "    transport = \"device\";       // NCCL send/recv between GPU buffers\n"
	  "    send_latency = 10us;        // NCCL send/recv start-up\n"
	  "    halo = \"pairwise\";\n"
	  "    after_gather = \"split\";\n"
	  "    model_loader = \"process\";   // a DataLoader in every rank\n"
	  "    loader_workers = 16;        // torchvision references/classification: -j 16\n"
	  "    decode_bw = 49MB/s;         // tools/measure_loader.py, \"jpeg\"\n"
	  "    raw_sample = 62us;          // tools/measure_loader.py, \"raw\"\n"
	  "    overlap_grad = true;        // DDP all-reduces buckets during backward\n"
	  "    bucket = 25MB;              // DDP bucket_cap_mb default\n"
	  "    grad_copies = 2;            // DDP's reducer copies each gradient into its\n"
	  "                                // bucket and back (gradient_as_bucket_view\n"
	  "                                // defaults to False; reducer.cpp)\n"
	  "    broadcast_buffers = true;   // DDP's default: each forward broadcasts the\n"
	  "                                // buffers from rank 0 and copies them back\n"
	  "    depthwise = \"aten\";        // ATen's select_conv_backend: cuDNN for\n"
	  "                                // channels-last or fp16 inputs, else its own\n"
	  "                                // DepthwiseConv2d.cu kernels\n"
	  "    conv_tf32 = true;           // torch.backends.cudnn.allow_tf32 defaults to True\n"
	  "    conv_search = \"benchmark\"; // torchvision's references/classification and\n"
	  "                                // DeepLearningExamples set cudnn.benchmark\n"
	  "    nchw_transposes = \"each-pass\"; // cuDNN 8 transposes every pass's NCHW\n"
	  "                                // operands for its tensor-core kernels\n"
	  "    attention = \"eager\";       // MultiheadAttention's operators one by one\n"
	  "                                // (1.13 fuses only its inference fast path)\n"
	  "    optimizer_step = \"per-op\"; // torch.optim's for-loop over the parameters\n"
	  "                                // (the default before 2.0's foreach)\n"
	  "    zero_grad = true;           // zero_grad(set_to_none=False): 1.x's default;\n"
	  "                                // backward adds into the gradients kept\n"
	  "    step_sync = \"amp\";         // GradScaler.step reads found_inf (.item())\n"
	  "                                // before it calls the optimizer\n"
	  "    zero_partition = \"tensors\"; // ZeroRedundancyOptimizer: whole parameters\n"
	  "                                // to each rank (FSDP: flat at stages 2, 3)\n"
	  "    pipe_checkpoint = \"never\"; // torch.distributed.pipelining keeps every\n"
	  "                                // micro-batch's activations\n"
	  "    pipe_driver = \"process\";   // and runs a stage in each rank\n"
	  "}\n" },
	{ "pytorch-2",
	  "// PyTorch 2.x eager as people run it today; every key not given is\n"
	  "// pytorch's (1.13).\n"
	  "implementation pytorch_2 {\n"
	  "    base = \"pytorch\";\n"
	  "    framework = \"PyTorch 2 (DDP, NCCL)\";\n"
	  "    dispatch = 8us;             // an operator from Python to its launch on a\n"
	  "                                // GPU: add of 512 x 512, 8 us a call issued\n"
	  "                                // back to back on an A100's host, PyTorch 2\n"
	  "                                // (flagos-ai/Torch-FL PR 27, its dispatch\n"
	  "                                // microbenchmark)\n"
	  "    library_call = 44us;        // a cuDNN call on top: 52 us per Conv2d call\n"
	  "                                // with cuDNN's v8 API, PyTorch's default since\n"
	  "                                // 2.0 (pytorch/pytorch PR 51390)\n"
	  "    nchw_transposes = \"once\";  // cuDNN 9: ResNet-50's 53 convolutions in TF32\n"
	  "                                // run 157 nchwToNhwc and 65 nhwcToNchw a step\n"
	  "                                // (validation/h100/profile_resnet50_tf32.txt)\n"
	  "    attention = \"fused\";       // MultiheadAttention and models that call\n"
	  "                                // scaled_dot_product_attention run flash or\n"
	  "                                // memory-efficient kernels (2.0 on)\n"
	  "    optimizer_step = \"foreach\"; // torch.optim's default on CUDA since 2.0\n"
	  "                                // (_default_to_fused_or_foreach)\n"
	  "    zero_grad = false;          // zero_grad(set_to_none=True), the default\n"
	  "                                // since 2.0: no kernels, nothing to add into\n"
	  "}\n" },
	{ "chainermn-paradl",
	  "// The ParaDL scripts on ABCI as they ran: Chainer 7, ChainerMN,\n"
	  "// chainermnx@6cb392a, Open MPI 2.1.6, NCCL 2.3.5, CUDA 9.0 (read from\n"
	  "// their code: ../shared/docs/paradl-implementation.md).\n"
	  "implementation chainermn_paradl {\n"
	  "    framework = \"Chainer 7 + ChainerMN (ParaDL scripts)\";\n"
	  "    dispatch = 30us;            // Chainer: Python cost of one FunctionNode call\n"
	  "    library_call = 0us;         // cuDNN's calls through CuPy: in the above\n"
	  "    step_tensor = 0us;          // an update call per parameter (no foreach)\n"
	  "    transport = \"host\";         // CUDA managed memory everywhere; Open MPI\n"
	  "                                // stages managed buffers through host memory\n"
	  "    send_latency = 300us;       // one ChainerMN send: a pickled header Ssend,\n"
	  "                                // a stream sync, the data Ssend (two\n"
	  "                                // rendezvous messages): a software cost, kept\n"
	  "    staging_bw = 3GB/s;         // fitted with it on the 9 spatial and ds rows of\n"
	  "                                // validation/abci-measured.csv, which see only\n"
	  "                                // the halo time (900us with 6 GB/s fits as\n"
	  "                                // well); a quarter of a PCIe Gen3 x16 link,\n"
	  "                                // shared by two GPUs behind a PLX switch and\n"
	  "                                // crossed by managed-memory page migration\n"
	  "    halo = \"chain\";             // blocking Ssend r -> r+1, then r -> r-1\n"
	  "    strips = \"halo-rows\";      // convolutions unpadded on the split axis,\n"
	  "                                // fed the halo rows (zeros on the edge\n"
	  "                                // ranks), pooling with cover_all: VGG16's\n"
	  "                                // strips of 56, 29, 16, 9, 6, 4 rows on 4\n"
	  "                                // GPUs (the authors' graph dump)\n"
	  "    after_gather = \"replicated\"; // layers after the gather on the whole\n"
	  "                                // node batch, on every GPU\n"
	  "    model_loader = \"node\";      // one MultithreadIterator per node, its batch\n"
	  "                                // broadcast to and copied by every GPU\n"
	  "    loader_workers = 20;        // MultithreadIterator(n_threads=20)\n"
	  "    decode_bw = 12MB/s;         // PIL decode, crop 226, float32, mean\n"
	  "                                // subtraction: ~9 ms per 110 KB image\n"
	  "    raw_sample = 62us;\n"
	  "    overlap_grad = false;       // ChainerMN all-reduces after backward\n"
	  "    bucket = 25MB;\n"
	  "    grad_copies = 0;            // pure_nccl packs the gradients into its buffer\n"
	  "                                // and out in batched copies\n"
	  "    broadcast_buffers = false;  // each rank keeps its batch statistics\n"
	  "    depthwise = \"cudnn\";       // Chainer's grouped Convolution2D calls cuDNN\n"
	  "    attention = \"eager\";\n"
	  "    conv_search = \"heuristic\"; // chainer.config.autotune is False by default:\n"
	  "                                // cuDNN's heuristic picks the algorithm\n"
	  "    conv_tf32 = false;          // CUDA 9, cuDNN 7: no TF32\n"
	  "    optimizer_step = \"fused\";  // Adam's update_core_gpu: one elementwise\n"
	  "                                // kernel per parameter\n"
	  "    zero_grad = false;          // cleargrads() drops the gradients\n"
	  "    step_sync = \"always\";      // pure_nccl synchronizes the stream before\n"
	  "                                // its all-reduce: each update call then\n"
	  "                                // issued to an idle GPU, at the CPU's 30 us\n"
	  "}\n" },
	{ "horovod",
	  "// Horovod on PyTorch: tensor fusion over NCCL; every key not given is\n"
	  "// pytorch's.\n"
	  "implementation horovod {\n"
	  "    framework = \"Horovod (PyTorch, NCCL)\";\n"
	  "    overlap_grad = true;        // gradients all-reduced as backward produces them\n"
	  "    bucket = 64MB;              // HOROVOD_FUSION_THRESHOLD default\n"
	  "    grad_copies = 0;            // into and out of the fusion buffer in batched\n"
	  "                                // device copies (HOROVOD_BATCH_D2D_MEMCOPIES)\n"
	  "    broadcast_buffers = false;  // broadcast_parameters once, at the start\n"
	  "}\n" },
	{ "torchgpipe",
	  "// GPipe as torchgpipe built it (Kim et al., arXiv:2004.09910), in PyTorch\n"
	  "// since 1.8 as torch.distributed.pipeline.sync.Pipe; every key not given\n"
	  "// is pytorch's.\n"
	  "implementation torchgpipe {\n"
	  "    framework = \"torchgpipe (PyTorch Pipe)\";\n"
	  "    pipe_checkpoint = \"except-last\"; // Pipe(checkpoint='except_last'), the\n"
	  "                                // default: each partition keeps the input of\n"
	  "                                // every micro-batch but the last and runs\n"
	  "                                // its forward again in backward\n"
	  "    pipe_driver = \"threads\";   // one process: a worker thread per GPU runs\n"
	  "                                // its partition's forward, in Python, under\n"
	  "                                // the one interpreter lock (pipeline/sync/\n"
	  "                                // worker.py), so every stage's forward\n"
	  "                                // operators are issued one after another\n"
	  "}\n" },
	{ "deepspeed",
	  "// DeepSpeed's engine on PyTorch (ZeRO stage 0); every key not given is\n"
	  "// pytorch's.\n"
	  "implementation deepspeed {\n"
	  "    framework = \"DeepSpeed (PyTorch, NCCL)\";\n"
	  "    overlap_grad = true;        // overlap_comm\n"
	  "    bucket = 500MB;             // allreduce_bucket_size default 5e8\n"
	  "    grad_copies = 1;            // a bucket flattened in one cat, all-reduced,\n"
	  "                                // each gradient copied back from it\n"
	  "                                // (allreduce_no_retain)\n"
	  "    broadcast_buffers = false;  // the model broadcast once, at the start\n"
	  "    zero_partition = \"flat\";   // each rank steps one slice of the flattened\n"
	  "                                // parameters (stage_1_and_2.py), its engine's\n"
	  "                                // pipelines too\n"
	  "}\n" },
};

const char *
builtin_impl(const char *name)
{
	const Builtin *b = builtin_lookup(builtin, sizeof builtin / sizeof builtin[0], name);

	return b ? b->text : NULL;
}

const char *
builtin_impl_canonical(const char *name)
{
	const Builtin *b = builtin_lookup(builtin, sizeof builtin / sizeof builtin[0], name);

	return b ? b->name : NULL;
}

const char *
builtin_impl_name(int i)
{
	return i >= 0 && (size_t)i < sizeof builtin / sizeof builtin[0] ? builtin[i].name : NULL;
}
