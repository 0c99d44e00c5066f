# Run by pvbatch (tests/scenarios/paraview_state_test.py): loads each RUN_DIR/view.pvsm as a user would in
# pvpython, LoadState(..., data_directory=RUN_DIR) from another working directory, goes to the last time step
# and prints, as one JSON line, what ParaView reports for every source: its file, number of points, the
# representation, colouring array, visibility, sphere radius and slice, and the time steps.
#   usage: pvbatch paraview_load_state.py RUN_DIR...
import json
import os
import sys

from paraview import simple as pv

report = {}
os.chdir("/")  # the state's relative file names must be found through data_directory, not the working dir
for run_dir in sys.argv[1:]:
    run_dir = os.path.abspath(run_dir)
    if report:
        pv.ResetSession()  # the previous state's sources and colour maps out of the way
    pv.LoadState(os.path.join(run_dir, "view.pvsm"), data_directory=run_dir)
    view = pv.GetActiveView()
    scene = pv.GetAnimationScene()
    scene.UpdateAnimationUsingDataTimeSteps()
    scene.GoToLast()
    time = pv.GetTimeKeeper().Time
    sources = {}
    for source in pv.GetSources().values():
        display = pv.GetDisplayProperties(source, view)
        source.UpdatePipeline(time)
        representation = display.SMProxy.GetProperty("Representation").GetElement(0)
        sources[os.path.basename(str(source.FileName))] = {
            "file": str(source.FileName),
            "points": int(source.GetDataInformation().GetNumberOfPoints()),
            "representation": representation,
            "color": [str(v) for v in display.ColorArrayName],
            "visible": int(display.Visibility),
            "radius": float(display.GaussianRadius),
            "slice": int(display.Slice) if representation == "Slice" else None,
        }
    report[run_dir] = {"sources": sources, "time": float(time),
                       "timesteps": [float(t) for t in pv.GetTimeKeeper().TimestepValues]}
print("REPORT " + json.dumps(report), flush=True)
