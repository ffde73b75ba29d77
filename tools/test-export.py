#!/usr/bin/env python3
"""test-export.py — checks tools/ddpsim-export.py against the generated models/resnet50.model.

Exports torchvision's resnet50 (batch 2, 224x224, CPU) with the exporter and compares it with the
file tools/gen-models.py wrote from the torchvision definition:
  * parameters: names, shapes and order (model.parameters() order) — exactly;
  * the layer that owns each parameter, and the forward order of those layers — exactly;
  * ready_order: observed in the exporter's real backward pass vs the generator's derived order
    (docs/model.md §1.3; models/README.md "Ready order") — exactly;
  * conv/linear FLOPs per layer, forward and backward (dX skipped on the image) — exactly;
  * buffer_bytes — exactly;
  * model totals of FLOPs, bytes and saved activations — within a tolerance, because the exporter
    lists ReLUs and residual adds as layers of their own where the generator folds them;
  * image_size = 224, and `scaling` measured at half the input: fc fixed, every other layer linear,
    as the generator marks them.
Then two small modules written here: a token model (embedding, q/k/v projections, softmax(QKᵀ)V,
a head on the mean) must get seq_len and scaling linear / quadratic / fixed where each belongs; a
grouped convolution must carry `groups`.
Exit status (Automake convention): 0 pass, 1 fail, 77 skip (torch or torchvision not installed).

Usage: python3 tools/test-export.py [--keep FILE]
"""
import os
import shutil
import subprocess
import sys
import tempfile

SMALL_MODULES = """
import torch


class TinyLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(100, 32)
        self.q = torch.nn.Linear(32, 32)
        self.k = torch.nn.Linear(32, 32)
        self.v = torch.nn.Linear(32, 32)
        self.head = torch.nn.Linear(32, 10)

    def forward(self, x):
        h = self.emb(x)
        scores = torch.softmax(self.q(h) @ self.k(h).transpose(1, 2) / 5.66, dim=-1)
        return self.head((scores @ self.v(h)).mean(1))


def grouped():
    return torch.nn.Sequential(torch.nn.Conv2d(8, 16, 3, groups=4), torch.nn.ReLU())


class OneSize(torch.nn.Module):
    # built for 16x16 inputs only, like a model with a fixed position table

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        if x.shape[-1] != 16:
            raise ValueError("expected 16x16 images")
        return self.conv(x)
"""

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def parse_model(path):
    """Minimal reader of the model format (models/README.md): [model] keys, layers in order."""
    model, layers, cur = {}, [], None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("["):
                name = line[1:-1]
                if name == "model":
                    cur = model
                else:
                    assert name.startswith("layer "), name
                    cur = {"name": name[len("layer "):]}
                    layers.append(cur)
                continue
            key, value = line.split("=", 1)
            cur[key.strip()] = value.strip()
    params = []
    for layer in layers:
        for entry in filter(None, layer.get("params", "").split(";")):
            fields = entry.split(":")
            params.append((fields[0], tuple(int(d) for d in fields[1].split(",")), layer["name"]))
    if "ready_order" in model:
        ready = model["ready_order"].split(";")
    else:
        ready = [p[0] for p in reversed(params)]
    return model, layers, params, ready


def totals(layers):
    keys = ("forward_flops", "backward_flops", "forward_bytes", "backward_bytes", "activation_bytes")
    return {k: sum(float(l[k]) for l in layers) for k in keys}


def main(argv):
    keep = argv[1] if len(argv) > 1 and argv[0] == "--keep" else None
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as e:
        print("SKIP: %s (apt-get install python3-torch python3-torchvision)" % e)
        return 77
    out = keep or os.path.join(tempfile.mkdtemp(prefix="ddpsim-export-"), "resnet50.model")
    cmd = [sys.executable, os.path.join(HERE, "ddpsim-export.py"), "torchvision.models:resnet50",
           "--input-shape", "2,3,224,224", "--name", "resnet50", "-o", out]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if r.returncode != 0:
        print("FAIL: exporter exited %d\n%s" % (r.returncode, r.stderr))
        return 1
    gmodel, glayers, gparams, gready = parse_model(os.path.join(ROOT, "models", "resnet50.model"))
    emodel, elayers, eparams, eready = parse_model(out)
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    check([(n, s) for n, s, _ in gparams] == [(n, s) for n, s, _ in eparams],
          "parameters: %d names and shapes in registration order" % len(gparams))
    check([l for _, _, l in gparams] == [l for _, _, l in eparams],
          "every parameter belongs to the same layer, layers in the same forward order")
    check(gready == eready, "ready_order: derived (generator) == observed in backward (exporter)")
    if gready != eready:
        for i, (a, b) in enumerate(zip(gready, eready)):
            if a != b:
                print("     first difference at %d: generator %s, exporter %s" % (i, a, b))
                break
    check(gmodel.get("buffer_bytes") == emodel.get("buffer_bytes"),
          "buffer_bytes %s == %s" % (gmodel.get("buffer_bytes"), emodel.get("buffer_bytes")))
    eby = {l["name"]: l for l in elayers}
    bad = []
    for l in glayers:
        if l["kind"] in ("conv", "linear"):
            e = eby.get(l["name"])
            for k in ("forward_flops", "backward_flops", "forward_bytes"):
                if e is None or e[k] != l[k]:
                    bad.append("%s.%s: generator %s, exporter %s" % (l["name"], k, l[k], e and e[k]))
    check(not bad, "conv/linear layers: forward/backward FLOPs and forward bytes identical")
    for b in bad[:5]:
        print("     " + b)
    check(emodel.get("image_size") == "224", "image_size %s == 224" % emodel.get("image_size"))
    gscaling = {l["name"]: l["scaling"] for l in glayers if "scaling" in l}
    escaling = {l["name"]: l["scaling"] for l in elayers if "scaling" in l}
    check(gscaling == escaling, "scaling: generator %s == exporter %s" % (gscaling, escaling))
    gt, et = totals(glayers), totals(elayers)
    tol = {"forward_flops": 0.01, "backward_flops": 0.01, "forward_bytes": 0.05,
           "backward_bytes": 0.15, "activation_bytes": 0.02}
    for k, t in tol.items():
        rel = abs(et[k] - gt[k]) / gt[k]
        check(rel <= t, "total %s: generator %.4g, exporter %.4g (%.1f %% apart, limit %g %%)"
              % (k, gt[k], et[k], 100 * rel, 100 * t))
    small_dir = tempfile.mkdtemp(prefix="ddpsim-export-small-")
    with open(os.path.join(small_dir, "small_modules.py"), "w") as f:
        f.write(SMALL_MODULES)
    for target, shape, extra in (("small_modules:TinyLM", "2,64", ["--input-dtype", "int64", "--input-high", "100"]),
                                 ("small_modules:grouped", "2,8,16,16", []),
                                 ("small_modules:OneSize", "2,8,16,16", [])):
        path = os.path.join(small_dir, target.split(":")[1] + ".model")
        r = subprocess.run([sys.executable, os.path.join(HERE, "ddpsim-export.py"), target, "--input-shape", shape,
                            "-o", path] + extra, cwd=small_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        check(r.returncode == 0, "export %s (%s)" % (target, r.stderr.strip()))
        if r.returncode != 0:
            continue
        model, layers, _, _ = parse_model(path)
        by = {l["name"]: l for l in layers}
        if target.endswith("TinyLM"):
            check(model.get("seq_len") == "64", "TinyLM: seq_len %s == 64" % model.get("seq_len"))
            got = {n: l.get("scaling", "linear") for n, l in by.items()}
            want = {"emb": "linear", "q": "linear", "k": "linear", "v": "linear", "ops": "quadratic",
                    "ops#2": "quadratic", "head": "fixed"}
            check(got == want, "TinyLM scaling: %s == %s" % (got, want))
        elif target.endswith("grouped"):
            check(by.get("0", {}).get("groups") == "4", "grouped conv: groups %s == 4" % by.get("0", {}).get("groups"))
        else:
            with open(path) as f:
                text = f.read()
            check("did not run at image_size 8: expected 16x16 images" in text and "scaling =" not in text,
                  "a model built for one input size: exported, every layer linear, and the file says why")
    shutil.rmtree(small_dir)
    if failures:
        print("FAIL: %d check(s) failed; exported file: %s" % (len(failures), out))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
