"""pvbatch side of cpu.tissue_run_ranks.paraview_grid_pieces: opens a decomposed run's grid snapshot (a .pvti
naming one .vti piece per rank) and the one-rank run's .vti of the same step with ParaView's default readers
(OpenDataFile), and checks that the pieces make one dataset with the whole grid's points and the same values.
Arguments: the .pvti, the .vti, the array name. Exits 1 on a mismatch."""
import sys

import numpy as np
from paraview import servermanager as sm
from paraview.simple import OpenDataFile
from vtk.numpy_interface import dataset_adapter as dsa

pieces_path, whole_path, name = sys.argv[1:4]
data = {}
for path in (pieces_path, whole_path):
    reader = OpenDataFile(path)
    reader.UpdatePipeline()
    fetched = sm.Fetch(reader)
    data[path] = (reader.GetXMLName(), fetched.GetDimensions(),
                  np.asarray(dsa.WrapDataObject(fetched).PointData[name]))
(reader, dims, pieces), (_, whole_dims, whole) = data[pieces_path], data[whole_path]
ok = dims == whole_dims and pieces.shape == whole.shape and np.array_equal(pieces, whole)
print(f"{pieces_path}: reader {reader}, dimensions {dims} (one rank: {whole_dims}), {name} "
      f"{'equal' if ok else 'DIFFERENT'} to {whole_path}")
sys.exit(0 if ok else 1)
