#!/usr/bin/env python3
"""Real PyTorch DDP against `ddpsim buckets` (TAP).

For several small models and bucket_cap_mb values: export the model with tools/ddpsim-export.py,
run real DistributedDataParallel with the gloo backend, 2 processes on loopback, for a few
iterations, read DDP's own logging data (`_get_ddp_logging_data()`: bucket_sizes at construction,
rebuilt_bucket_sizes and rebuilt_per_bucket_param_indices after the rebuild), and check that
`ddpsim buckets --json --device cpu --torch-version X.Y` (the installed torch's release) gives
exactly the same initial and rebuilt layouts.  Besides the default settings it covers mixed
dtypes (fp32 + fp64, whose leftover buckets come out of the Reducer's unordered_map in reverse
order of first appearance) at caps 10 and 50 MiB, static_graph with unused parameters (which the
exporter lists last, in parameters() order), find_unused_parameters with an explicit cap (whose
construction-time limits changed between 1.13 and 2.x), and checks WHEN the rebuild happens:
DDP logs the rebuilt layout at the forward after the rebuild, so it must first appear after
iteration 2 (rebuild before iteration 1) and after iteration 3 under static_graph (rebuild before
iteration 2, ddp.c's warm-up).

Skips (TAP "1..0 # SKIP") when torch is not installed (Debian: python3-torch).  Debian's torch is
in /usr/lib/python3/dist-packages; when the python3 running this has no torch but /usr/bin/python3
does, the script re-runs itself there.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    import torch.nn as nn
except ImportError:
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3") and \
            subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode == 0:
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("1..0 # SKIP python3-torch is not installed (apt-get install python3-torch)")
    sys.exit(0)


# ---- the models (importable as real_ddp:NAME by the exporter) -----------------------------------

class Mlp(nn.Module):
    """Linear layers of mixed sizes: 1 MiB first bucket, several cap-sized buckets."""
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(256, 1024)
        self.fc2 = nn.Linear(1024, 1024)
        self.fc3 = nn.Linear(1024, 512)
        self.fc4 = nn.Linear(512, 512)
        self.out = nn.Linear(512, 10)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        x = torch.relu(self.fc3(x))
        return self.out(torch.relu(self.fc4(x)))


class Cnn(nn.Module):
    """Convolutions with BatchNorm: weight is ready before bias in conv and norm layers."""
    def __init__(self):
        super().__init__()
        chans = [3, 64, 128, 256, 256]
        layers = []
        for a, b in zip(chans, chans[1:]):
            layers += [nn.Conv2d(a, b, 3, padding=1, bias=True), nn.BatchNorm2d(b), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(256, 10)

    def forward(self, x):
        return self.head(self.features(x).mean(dim=(2, 3)))


class Reordered(nn.Module):
    """Registration order differs from forward order: `head` is registered before `body`."""
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(768, 10)
        self.body = nn.Sequential(nn.Linear(128, 768), nn.GELU(), nn.Linear(768, 768), nn.LayerNorm(768))

    def forward(self, x):
        return self.head(self.body(x))


class Embedder(nn.Module):
    """Embedding + transformer-ish block: a large first tensor, norms, biases."""
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(2000, 256)
        self.norm = nn.LayerNorm(256)
        self.proj = nn.Linear(256, 1024)
        self.back = nn.Linear(1024, 256)
        self.cls = nn.Linear(256, 4)

    def forward(self, x):
        h = self.norm(self.embed(x))
        return self.cls((h + self.back(torch.relu(self.proj(h)))).mean(dim=1))


class Mixed(nn.Module):
    """fp32 and fp64 layers interleaved, 4 and 8 MiB weights: per-dtype buckets, two leftovers."""
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(1024, 1024)
        self.b = nn.Linear(1024, 1024).double()
        self.c = nn.Linear(1024, 1024)
        self.d = nn.Linear(1024, 1024).double()
        self.e = nn.Linear(1024, 1024)
        self.f = nn.Linear(1024, 1024).double()
        self.g = nn.Linear(1024, 10)

    def forward(self, x):
        x = torch.relu(self.a(x))
        x = torch.relu(self.b(x.double())).float()
        x = torch.relu(self.c(x))
        x = torch.relu(self.d(x.double())).float()
        x = torch.relu(self.e(x))
        x = torch.relu(self.f(x.double())).float()
        return self.g(x)


class Partial(nn.Module):
    """Two layers never used in forward (u1, u2): static_graph reduces them anyway."""
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(64, 64)
        self.u1 = nn.Linear(64, 64)
        self.b = nn.Linear(64, 64)
        self.u2 = nn.Linear(64, 8)
        self.c = nn.Linear(64, 8)

    def forward(self, x):
        return self.c(torch.relu(self.b(torch.relu(self.a(x)))))


def mlp():
    torch.manual_seed(0)
    return Mlp(), (torch.randn(8, 256),)


def cnn():
    torch.manual_seed(0)
    return Cnn(), (torch.randn(4, 3, 16, 16),)


def reordered():
    torch.manual_seed(0)
    return Reordered(), (torch.randn(8, 128),)


def embedder():
    torch.manual_seed(0)
    return Embedder(), (torch.randint(0, 2000, (4, 16)),)


def mixed():
    torch.manual_seed(0)
    return Mixed(), (torch.randn(2, 1024),)


def partial():
    torch.manual_seed(0)
    return Partial(), (torch.randn(4, 64),)


BUILDERS = {"mlp": mlp, "cnn": cnn, "reordered": reordered, "embedder": embedder, "mixed": mixed,
            "partial": partial}

# (model, bucket_cap_mb passed to DDP or None for PyTorch's default, find_unused_parameters, static_graph)
CASES = [
    ("mlp", 25, False, False), ("mlp", 6.0, False, False), ("mlp", 3.0, False, False), ("mlp", 1.0, False, False),
    ("mlp", 0.1, False, False),
    ("cnn", 25, False, False), ("cnn", 1.0, False, False), ("cnn", 0.25, False, False), ("cnn", 0.05, False, False),
    ("reordered", 25, False, False), ("reordered", 0.5, False, False), ("reordered", 0.1, False, False),
    ("embedder", 25, False, False), ("embedder", 0.3, False, False),
    ("mlp", None, True, False), ("cnn", None, True, False),
    ("mixed", 10, False, False), ("mixed", 50, False, False),
    ("partial", None, False, True), ("mixed", 50, False, True),
    ("mixed", 10, True, False), ("cnn", 0.25, True, False),
]


# ---- one DDP run ------------------------------------------------------------------------------

def worker(rank, port, name, cap_mb, find_unused, static_graph, out_path):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    model, inputs = BUILDERS[name]()
    cap = {} if cap_mb is None else {"bucket_cap_mb": cap_mb}   # torch 1.13 refuses None
    ddp = nn.parallel.DistributedDataParallel(model, find_unused_parameters=find_unused, static_graph=static_graph, **cap)
    initial = ddp._get_ddp_logging_data()["bucket_sizes"]
    first_logged = None   # the iteration after which the rebuilt layout first shows in the log
    for iteration in range(5):
        ddp(*inputs).float().sum().backward()
        if first_logged is None and ddp._get_ddp_logging_data().get("rebuilt_bucket_sizes", ""):
            first_logged = iteration
    logged = ddp._get_ddp_logging_data()
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump({"initial": initial,
                       "rebuilt_sizes": logged.get("rebuilt_bucket_sizes", ""),
                       "rebuilt_indices": logged.get("rebuilt_per_bucket_param_indices", ""),
                       "first_logged": first_logged,
                       "names": [n for n, p in model.named_parameters() if p.requires_grad]}, f)
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ddp(name, cap_mb, find_unused, static_graph, tmp):
    out = os.path.join(tmp, "ddp-%s-%s-%d-%d.json" % (name, cap_mb, find_unused, static_graph))
    mp.spawn(worker, args=(free_port(), name, cap_mb, find_unused, static_graph, out), nprocs=2, join=True)
    with open(out) as f:
        return json.load(f)


def parse_sizes(text):
    return [int(v) for v in text.replace(",", " ").split()]


def parse_indices(text):
    # "5 4 3, 2 1 0": buckets separated by commas (PyTorch joins per-bucket index lists)
    return [[int(v) for v in bucket.split()] for bucket in text.split(",") if bucket.strip()]


def main():
    ddpsim = os.environ.get("DDPSIM", os.path.join(TOP, "ddpsim"))
    version = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    cases = [c for c in CASES if len(sys.argv) < 2 or c[0] in sys.argv[1:]]
    print("1..%d" % (len(cases) + 1))
    failures = 0
    # 0: the exporter against the generator's resnet50.model (tools/test-export.py)
    check = subprocess.run([sys.executable, os.path.join(TOP, "tools", "test-export.py")], capture_output=True, text=True)
    if check.returncode == 0:
        print("ok 1 - tools/ddpsim-export.py on torchvision resnet50 == models/resnet50.model")
    elif check.returncode == 77:
        print("ok 1 # SKIP %s" % check.stdout.strip().splitlines()[-1:])
    else:
        failures += 1
        print("not ok 1 - tools/ddpsim-export.py on torchvision resnet50 == models/resnet50.model")
        for line in (check.stdout + check.stderr).splitlines():
            print("# " + line)
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
        exported = {}
        for number, (name, cap_mb, find_unused, static_graph) in enumerate(cases, 2):
            label = "%s bucket_cap_mb=%s%s%s" % (name, "default" if cap_mb is None else "%g" % cap_mb,
                                                 " find_unused_parameters" if find_unused else "",
                                                 " static_graph" if static_graph else "")
            try:
                if name not in exported:
                    path = os.path.join(tmp, name + ".model")
                    subprocess.run([sys.executable, os.path.join(TOP, "tools", "ddpsim-export.py"), "real_ddp:" + name,
                                    "-o", path], check=True, env=env, capture_output=True)
                    exported[name] = path
                real = run_ddp(name, cap_mb, find_unused, static_graph, tmp)
                args = [ddpsim, "buckets", "--model", exported[name], "--json", "--device", "cpu",
                        "--torch-version", version]
                if cap_mb is not None:
                    args += ["--bucket-cap-mb", "%r" % cap_mb]
                if find_unused:
                    args.append("--find-unused-parameters")
                if static_graph:
                    args.append("--static-graph")
                rebuilds = static_graph or not find_unused
                sim = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
                index = {n: i for i, n in enumerate(real["names"])}
                sim_initial = [b["bytes"] for b in sim["initial"]]
                sim_rebuilt = [b["bytes"] for b in sim["rebuilt"]]
                sim_indices = [[index[p] for p in b["params"]] for b in sim["rebuilt"]]
                problems = []
                if sim_initial != parse_sizes(real["initial"]):
                    problems.append("initial sizes: ddpsim %s, PyTorch %s" % (sim_initial, real["initial"]))
                if rebuilds:
                    expected = 3 if static_graph else 2
                    if real["first_logged"] != expected:
                        problems.append("rebuilt layout first logged after iteration %s, expected %d"
                                        % (real["first_logged"], expected))
                    if sim_rebuilt != parse_sizes(real["rebuilt_sizes"]):
                        problems.append("rebuilt sizes: ddpsim %s, PyTorch %s" % (sim_rebuilt, real["rebuilt_sizes"]))
                    if sim_indices != parse_indices(real["rebuilt_indices"]):
                        problems.append("rebuilt indices: ddpsim %s, PyTorch %s" % (sim_indices, real["rebuilt_indices"]))
                elif real["rebuilt_sizes"]:
                    problems.append("PyTorch rebuilt buckets under find_unused_parameters: %s" % real["rebuilt_sizes"])
                if problems:
                    failures += 1
                    print("not ok %d - %s" % (number, label))
                    for p in problems:
                        print("# " + p)
                else:
                    print("ok %d - %s: initial %s, rebuilt %s" % (number, label, sim_initial, sim_rebuilt if rebuilds else "(none)"))
            except Exception as e:  # report, keep going
                failures += 1
                print("not ok %d - %s" % (number, label))
                for line in str(e).splitlines():
                    print("# " + line)
                if isinstance(e, subprocess.CalledProcessError) and e.stderr:
                    for line in (e.stderr if isinstance(e.stderr, str) else e.stderr.decode()).splitlines()[-5:]:
                        print("# " + line)
            sys.stdout.flush()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
