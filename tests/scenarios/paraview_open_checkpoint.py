"""pvbatch side of cli.paraview_state.checkpoints: opens each checkpoint .xdmf given with ParaView's default
reader for the file (OpenDataFile), and prints one line `REPORT <json>`: per file the reader's name and, per
block, its name, number of points and each point array's count and sum (float64)."""
import json
import sys

from paraview import servermanager as sm
from paraview.simple import OpenDataFile
from vtk.numpy_interface import dataset_adapter as dsa

report = {}
for path in sys.argv[1:]:
    reader = OpenDataFile(path)
    reader.UpdatePipeline()
    data = sm.Fetch(reader)
    blocks = []

    def add(name, block):
        wrapped = dsa.WrapDataObject(block)
        arrays = {key: [int(len(wrapped.PointData[key])), float(wrapped.PointData[key].astype("float64").sum())]
                  for key in wrapped.PointData.keys()}
        blocks.append({"name": name, "points": int(block.GetNumberOfPoints()), "arrays": arrays})

    if hasattr(data, "NewIterator"):
        it = data.NewIterator()
        it.InitTraversal()
        while not it.IsDoneWithTraversal():
            name = it.GetCurrentMetaData().Get(data.NAME()) if it.HasCurrentMetaData() else ""
            add(name, it.GetCurrentDataObject())
            it.GoToNextItem()
    else:
        add("", data)
    report[path] = {"reader": reader.GetXMLName(), "blocks": blocks}
print("REPORT " + json.dumps(report))
