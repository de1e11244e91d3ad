#!/usr/bin/python3
"""measure_loader.py -- CPU seconds one data-loader worker spends per training
sample, measured with the real software (Pillow with libjpeg-turbo, torchvision
transforms) on this machine's CPU.  The figures are the per-sample loader costs
of the built-in implementations (frontend/builtin_impl.c, docs/model.md, "Input
pipeline"); rerun this script to check them on another CPU.

Two kinds of sample, as the training recipes people run read them:

  jpeg   an ImageNet training image: a JPEG of ImageNet's average size
         (~110 KB, 500 x 375), decoded, RandomResizedCrop(224),
         RandomHorizontalFlip, then to a tensor (torchvision's reference
         recipe: ToTensor + Normalize, float32; NVIDIA's DeepLearningExamples
         keep uint8 and normalize on the GPU: "uint8" below)
  raw    a CIFAR image held in memory as 32 x 32 x 3 bytes: RandomCrop(32,
         padding=4), RandomHorizontalFlip, ToTensor, Normalize

The synthetic JPEG is a smooth random field with fine noise, at the JPEG
quality that gives ImageNet's average file size: decoding costs what the
pixel count and the entropy-coded bytes cost, not what the picture shows.

Usage: tools/measure_loader.py [--samples N]   (prints one line per kind)
"""
import io
import sys
import time

import numpy as np
from PIL import Image
import torch
import torchvision.transforms as T

IMAGENET_JPEG_BYTES = 110000  # ImageNet-1k train: 140 GB / 1,281,167 images


def photo_like(w, h, rng):
    """A smooth random field (a few octaves of upsampled noise) plus fine
    noise: JPEG codes it to about the size of a photograph."""
    img = np.zeros((h, w, 3), np.float32)
    for scale, amp in ((8, 90.0), (32, 40.0), (128, 20.0)):
        small = rng.standard_normal((max(2, h // (h // scale or 1)), scale, 3)).astype(np.float32)
        small = rng.standard_normal((scale * h // w + 2, scale, 3)).astype(np.float32)
        up = np.asarray(Image.fromarray(((small - small.min()) / (np.ptp(small) + 1e-9) * 255)
                                        .astype(np.uint8)).resize((w, h), Image.BICUBIC),
                        np.float32)
        img += (up - 128) * amp / 128
    img += rng.standard_normal((h, w, 3)).astype(np.float32) * 6
    return Image.fromarray(np.clip(img + 128, 0, 255).astype(np.uint8))


def jpeg_of_size(target, rng):
    img = photo_like(500, 375, rng)
    best = None
    for q in range(50, 100, 2):
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=q)
        if best is None or abs(buf.tell() - target) < abs(len(best) - target):
            best = buf.getvalue()
    return best


def per_sample(fn, n):
    fn()  # warm up
    t0 = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t0) / n


def main(argv):
    n = int(argv[argv.index("--samples") + 1]) if "--samples" in argv else 200
    torch.set_num_threads(1)  # one worker: one core
    rng = np.random.default_rng(0)
    data = jpeg_of_size(IMAGENET_JPEG_BYTES, rng)
    crop = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip()])
    norm = T.Compose([T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

    def decode():
        return Image.open(io.BytesIO(data)).convert("RGB")

    def jpeg_float():
        return norm(crop(decode()))

    def jpeg_uint8():
        return torch.from_numpy(np.asarray(crop(decode()), np.uint8))

    cifar = Image.fromarray(rng.integers(0, 256, (32, 32, 3), np.uint8))
    aug = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(),
                     T.Normalize([0.507, 0.487, 0.441], [0.267, 0.256, 0.276])])

    def raw():
        return aug(cifar)

    print("cpu      %s" % next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                                if l.startswith("model name")), "?"))
    print("jpeg     %d bytes, 500x375" % len(data))
    for name, fn in (("decode", decode), ("jpeg", jpeg_float), ("jpeg-uint8", jpeg_uint8),
                     ("raw", raw)):
        t = per_sample(fn, n)
        print("%-10s %8.3f ms/sample  %8.0f samples/s per core" % (name, t * 1e3, 1 / t))


if __name__ == "__main__":
    main(sys.argv)
