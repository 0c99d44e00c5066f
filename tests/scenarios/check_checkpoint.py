#!/usr/bin/env python3
"""Checks a checkpoint and its .xdmf with independent readers (h5py, xml.etree).

usage: check_checkpoint.py CHECKPOINT.h5 MODEL STEP

The HDF5 file must be a tissue checkpoint of MODEL at STEP whose stored scenario matches its SHA-256, whose
tables have size <= capacity and one row per entry in every column, and every DataItem of the .xdmf beside
it must name a dataset of the file with the declared dimensions and number type; ParaView reads the .xdmf
through these references.
"""
import hashlib
import os
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np

NUMBER_TYPES = {("Float", "4"): np.float32, ("Float", "8"): np.float64, ("Int", "4"): np.int32,
                ("Int", "8"): np.int64, ("UInt", "4"): np.uint32, ("UChar", "1"): np.uint8}


def main():
    path, model, step = sys.argv[1], sys.argv[2], int(sys.argv[3])
    problems = []
    with h5py.File(path, "r") as f:
        attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
        if attrs.get("format") != "tissue checkpoint" or attrs.get("model") != model or attrs.get("step") != step:
            problems.append(f"header {attrs}")
        scenario = f["scenario"][()]
        if hashlib.sha256(scenario).hexdigest() != attrs.get("scenario_sha256"):
            problems.append("scenario does not match its SHA-256")
        for name, table in f["tables"].items():
            size, capacity = table.attrs["size"], table.attrs["capacity"]
            if not 0 <= size <= capacity:
                problems.append(f"table {name}: size {size}, capacity {capacity}")
            for column, data in table.items():
                if data.shape[-1] != size:
                    problems.append(f"{name}/{column} has {data.shape[-1]} rows, not {size}")
        xdmf = os.path.splitext(path)[0] + ".xdmf"
        items = 0
        for item in ET.parse(xdmf).iter("DataItem"):
            if item.get("Format") != "HDF":
                continue
            items += 1
            file_name, dataset = item.text.strip().split(":")
            if file_name != os.path.basename(path):
                problems.append(f"DataItem refers to {file_name}")
                continue
            if dataset not in f:
                problems.append(f"DataItem refers to missing {dataset}")
                continue
            data = f[dataset]
            dims = tuple(int(d) for d in item.get("Dimensions").split())
            if int(np.prod(dims)) != data.size:
                problems.append(f"{dataset}: {data.shape} is not Dimensions {dims}")
            want = NUMBER_TYPES.get((item.get("NumberType"), item.get("Precision")))
            if want is None or data.dtype != np.dtype(want):
                problems.append(f"{dataset}: {data.dtype} declared {item.get('NumberType')}/{item.get('Precision')}")
        if items == 0:
            problems.append("the .xdmf refers to no dataset")
    if problems:
        print("; ".join(problems))
        return 1
    print(f"{path}: {model} checkpoint at step {step}, {items} XDMF data items resolved")
    return 0


if __name__ == "__main__":
    sys.exit(main())
