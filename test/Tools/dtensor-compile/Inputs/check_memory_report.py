# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks dtensor-compile --memory-report=json against sizes computed here.

  check_memory_report.py PLAN.json ARTIFACT.dtc REPORT.json

From the plan (its optimizer and accumulation) and the manifest (each
tensor's global shape, dtype and placements), computes every rank's local
bytes of the parameters, the optimizer state (one tensor per moment and
accumulator of each parameter, laid out as it, and the f32 counters), the
gradients (one per parameter, in its layout) and the inputs and outputs of
each entry, with torch.chunk's arithmetic written out here, and requires
the report to give exactly those. The figures the test cannot compute
independently are checked for order: the saved activations of train_step
hold at least the forward's hidden activation (the GELU's input, which its
gradient reads) and at most the last-use peak (they are all live at the
loss), which is at least the largest gradient and at most the transient
peak, itself at most the cached buffers; and the peak is the persistent memory plus the inputs, outputs and transient
peak. Prints one line per entry and rank.
"""

import json
import sys

BYTES = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i32": 4, "i64": 8,
         "i8": 1, "bool": 1}


def chunk(size, parts, index):
    """torch.chunk's size of piece `index` of `size` cut into `parts`."""
    piece = -(-size // parts)
    return max(0, min(piece, size - index * piece))


def local_bytes(tensor, mesh, rank):
    shape = list(tensor["shape"])
    coords, rest = [], mesh["device_ids"].index(rank)
    for size in reversed(mesh["shape"]):
        coords.insert(0, rest % size)
        rest //= size
    # Nested over the mesh dims, the first outermost.
    for mesh_dim, placement in enumerate(tensor["placements"]):
        if placement.startswith("S("):
            dim = int(placement[2:-1].split(",")[0])
            shape[dim] = chunk(shape[dim], mesh["shape"][mesh_dim],
                               coords[mesh_dim])
    total = BYTES[tensor["dtype"]]
    for size in shape:
        total *= size
    return total


def main():
    plan = json.load(open(sys.argv[1]))
    manifest = json.load(open(f"{sys.argv[2]}/manifest.json"))
    report = json.load(open(sys.argv[3]))
    training = plan["model"]["training"]
    optimizer = training["optimizer"]
    moments = {"adamw": 3 if optimizer.get("amsgrad") else 2,
               "sgd": 1 if optimizer.get("momentum", 0) else 0}[
                   optimizer["kind"]]
    accumulate = training.get("accumulation_steps", 1) > 1
    per_parameter = moments + (1 if accumulate else 0)
    counters = 4 * (2 if accumulate else 1)
    tensors = manifest["tensors"]
    mesh = manifest["meshes"][0]
    entries = {entry["name"]: entry for entry in manifest["entries"]}
    parameters = [t for t in tensors if t["role"] == "parameter"]
    assert parameters, "the plan trains no parameter"
    for entry in report["entries"]:
        name = entry["name"]
        manifest_entry = entries[name]
        io = [tensors[i] for i in manifest_entry["arguments"] +
              manifest_entry["results"] if tensors[i]["role"] in
              ("input", "output")]
        peaks = {}
        for memory in entry["ranks"]:
            rank = memory["rank"]
            params = sum(local_bytes(t, mesh, rank) for t in parameters)
            expected = {
                "parameters": params,
                "optimizer_state":
                    per_parameter * params + counters
                    if name == "train_step" else 0,
                "other_state": 0,
                "inputs_outputs": sum(local_bytes(t, mesh, rank) for t in io),
                "unknown_sizes": 0,
            }
            if name == "train_step":
                expected["gradients"] = params
            for key, value in expected.items():
                assert memory[key] == value, (
                    f"{name} rank {rank}: {key} {memory[key]}, expected "
                    f"{value}")
            assert memory["persistent"] == (memory["parameters"] +
                                            memory["optimizer_state"] +
                                            memory["other_state"])
            assert memory["peak"] == (memory["persistent"] +
                                      memory["inputs_outputs"] +
                                      memory["transient_peak"])
            assert 0 < memory["last_use_peak"] <= memory[
                "transient_peak"] <= memory["cached_buffers"], (
                    f"{name} rank {rank}")
            if name == "train_step":
                x, fc1 = (next(t for t in tensors if t["name"] == n)
                          for n in ("x", "fc1.weight"))
                hidden = {**fc1, "shape": [x["shape"][0], fc1["shape"][0]],
                          "placements": ["S(1)" if p == "S(0)" else p
                                         for p in fc1["placements"]]}
                assert local_bytes(hidden, mesh, rank) <= memory[
                    "saved_activations"] <= memory["last_use_peak"], (
                        f"rank {rank}: saved activations")
                largest = max(local_bytes(t, mesh, rank) for t in parameters)
                assert memory["last_use_peak"] >= largest, f"rank {rank}"
            else:
                assert "gradients" not in memory
            peaks[rank] = memory["peak"]
            print(f"{name} rank {rank}: parameters {memory['parameters']} "
                  f"optimizer_state {memory['optimizer_state']} ok")
        assert peaks[entry["max_rank"]] == max(peaks.values()), name


if __name__ == "__main__":
    main()
