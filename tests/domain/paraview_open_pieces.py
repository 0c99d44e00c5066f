"""pvbatch side of cpu.domain_mpi.paraview_pieces: opens each .pvtu given (a decomposed run's snapshot, one
piece per rank) with ParaView's default reader for the file (OpenDataFile) and checks that it is one dataset
holding every rank's points: arguments are triples of the file, the points expected and the sum of their
cell_id array. Exits 1 on a mismatch."""
import sys

from paraview import servermanager as sm
from paraview.simple import OpenDataFile
from vtk.numpy_interface import dataset_adapter as dsa

failed = False
args = sys.argv[1:]
for k in range(0, len(args), 3):
    path, points, id_sum = args[k], int(args[k + 1]), int(args[k + 2])
    reader = OpenDataFile(path)
    reader.UpdatePipeline()
    data = sm.Fetch(reader)
    got = int(data.GetNumberOfPoints())
    ids = dsa.WrapDataObject(data).PointData["cell_id"]
    got_sum = int(ids.sum()) if got > 0 else 0
    ok = got == points and got_sum == id_sum
    failed = failed or not ok
    print(f"{path}: reader {reader.GetXMLName()}, {got} points (expected {points}), cell_id sum {got_sum} "
          f"(expected {id_sum}): {'ok' if ok else 'MISMATCH'}")
sys.exit(1 if failed else 0)
