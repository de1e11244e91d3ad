"""oraclec.probe_gpus -- the datasheet figures of the GPUs the probe knows
by name.  A probed system takes its peaks and memory bandwidth from here
when the device's name matches (the efficiencies are then the measured
fraction of the datasheet), else from what it measured.

Peaks are dense (the datasheets print tensor-core figures "with sparsity",
twice the dense rate; those are halved here), in TFLOPS; memory_bw in GB/s.
`link` is the GPU-to-GPU bandwidth per GPU (GB/s) and latency (us) that the
built-in systems use for the SXM parts, written only when the probe could
not measure collectives (one GPU).
"""
import re

# (pattern on torch.cuda.get_device_name(), name, fp32, tf32, fp16, bf16,
#  memory_bw, link (GB/s, us) or None, source)
KNOWN = (
    (r"H100.*NVL", "H100-NVL", 60, 417.5, 835.5, 835.5, 3900, None,
     "NVIDIA H100 NVL datasheet: FP32 60 TF; TF32 835, BF16/FP16 1671 TF with sparsity; 3.9 TB/s"),
    (r"H100.*PCIe", "H100-PCIe", 51, 378, 756.5, 756.5, 2000, None,
     "NVIDIA H100 datasheet (PCIe): FP32 51 TF; TF32 756, BF16/FP16 1513 TF with sparsity; 2 TB/s"),
    (r"H100", "H100-SXM5", 67, 494.7, 989.4, 989.4, 3350, (450, 4),
     "NVIDIA H100 datasheet (SXM): FP32 67 TF; TF32 989, BF16/FP16 1979 TF with sparsity; 3.35 TB/s"),
    (r"H200", "H200-SXM", 67, 494.7, 989.4, 989.4, 4800, (450, 4),
     "NVIDIA H200 datasheet (SXM): FP32 67 TF; TF32 989, BF16/FP16 1979 TF with sparsity; 4.8 TB/s"),
    (r"A100.*80GB.*PCI", "A100-PCIe-80GB", 19.5, 156, 312, 312, 1935, None,
     "NVIDIA A100 datasheet: FP32 19.5, TF32 156, BF16/FP16 312 TF dense; 80GB PCIe 1,935 GB/s"),
    (r"A100.*80GB", "A100-SXM4-80GB", 19.5, 156, 312, 312, 2039, (300, 5),
     "NVIDIA A100 datasheet: FP32 19.5, TF32 156, BF16/FP16 312 TF dense; 80GB SXM 2,039 GB/s"),
    (r"A100.*SXM", "A100-SXM4-40GB", 19.5, 156, 312, 312, 1555, (300, 5),
     "NVIDIA A100 datasheet: FP32 19.5, TF32 156, BF16/FP16 312 TF dense; 40GB 1,555 GB/s"),
    (r"A100", "A100-PCIe-40GB", 19.5, 156, 312, 312, 1555, None,
     "NVIDIA A100 datasheet: FP32 19.5, TF32 156, BF16/FP16 312 TF dense; 40GB 1,555 GB/s"),
    (r"V100S", "V100S-PCIe", 16.4, 0, 130, 0, 1134, None,
     "NVIDIA V100S datasheet: FP32 16.4, tensor 130 TF; 1,134 GB/s"),
    (r"V100.*SXM", "V100-SXM2", 15.7, 0, 125, 0, 900, (75, 9),
     "NVIDIA V100 datasheet (SXM2): FP32 15.7, tensor 125 TF; 900 GB/s"),
    (r"V100", "V100-PCIe", 14, 0, 112, 0, 900, None,
     "NVIDIA V100 datasheet (PCIe): FP32 14, tensor 112 TF; 900 GB/s"),
    (r"\bT4\b", "T4", 8.1, 0, 65, 0, 320, None,
     "NVIDIA T4 datasheet: FP32 8.1, mixed FP16/FP32 65 TF; 320 GB/s"),
    (r"\bL4\b", "L4", 30.3, 60, 121, 121, 300, None,
     "NVIDIA L4 datasheet: FP32 30.3; TF32 120, BF16/FP16 242 TF with sparsity; 300 GB/s"),
    (r"L40S", "L40S", 91.6, 183, 362, 362, 864, None,
     "NVIDIA L40S datasheet: FP32 91.6; TF32 366, BF16/FP16 733 TF with sparsity; 864 GB/s"),
    (r"\bA10\b", "A10", 31.2, 62.5, 125, 125, 600, None,
     "NVIDIA A10 datasheet: FP32 31.2; TF32 125, BF16/FP16 250 TF with sparsity; 600 GB/s"),
)


def lookup(device_name):
    """The datasheet entry of a device name, as a dict (peaks in FLOP/s,
    memory_bw in bytes/s, link as (bytes/s, seconds) or None), or None."""
    for pat, name, fp32, tf32, fp16, bf16, bw, link, src in KNOWN:
        if re.search(pat, device_name):
            return {"name": name,
                    "peak": {"fp32": fp32 * 1e12, "tf32": tf32 * 1e12,
                             "fp16": fp16 * 1e12, "bf16": bf16 * 1e12},
                    "memory_bw": bw * 1e9,
                    "link": (link[0] * 1e9, link[1] * 1e-6) if link else None,
                    "source": src}
    return None
