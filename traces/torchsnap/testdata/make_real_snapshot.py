"""Records a real PyTorch memory snapshot on a machine with a CUDA GPU.

    python3 make_real_snapshot.py OUT.pickle

A few training steps of a small model, with _record_memory_history on,
then _dump_snapshot. Some weights are made before recording starts, so the
snapshot has blocks live before its trace begins.

real-cuda.pickle was made by this script's code without this docstring,
saved as /tmp/mk.py (so its sites name /tmp/mk.py, the training step's
line being 9), with PyTorch 2.11.0 and CUDA 13.0 on an NVIDIA H200.
"""
import sys

import torch

dev = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 10)).to(dev)
torch.cuda.memory._record_memory_history(max_entries=100000)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
side = torch.cuda.Stream()
for step in range(3):
    x = torch.randn(64, 256, device=dev)
    y = torch.randint(0, 10, (64,), device=dev)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    with torch.cuda.stream(side):  # a block used on another stream
        z = torch.ones(1024, device=dev) * 2
    z.record_stream(torch.cuda.current_stream())
    del z
torch.cuda.synchronize()
big = torch.empty(64 << 20, dtype=torch.uint8, device=dev)  # a large segment
del big
torch.cuda.empty_cache()  # segment_free
torch.cuda.memory._dump_snapshot(sys.argv[1])
print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name())
