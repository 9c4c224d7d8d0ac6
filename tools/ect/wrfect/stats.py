"""Statistics of one WRF run: area-weighted domain means of every field, per output time.

A 3-D field keeps one area-weighted mean per model level (the pictures and the per-level
diagnostics use them); the test vector averages those levels into a few vertical layers
(`layer_means`). A 2-D field keeps its area-weighted mean. Nothing here depends on the
case: every float field of wrfout with a Time dimension is taken, and fields that do not
vary across the ensemble are dropped later (ensemble.py), so static fields cost nothing.

Area weights are the cell areas dx*dy/(m_x*m_y) from wrfout's map factors (MAPFAC_MX/MY for
mass points, MAPFAC_UX/UY and MAPFAC_VX/VY for the staggered U and V points), so a
real-data domain on a Lambert projection is weighted by true area; on an idealised grid they
are all 1. Vertical weights are the eta thicknesses (|DNW| for mass levels, half of the two
adjacent |DNW| for the w levels), i.e. the fraction of the column's dry-air mass.
"""

import os
import threading

import numpy as np

try:
    import netCDF4
except ImportError:  # pragma: no cover - reported by the command-line wrapper
    netCDF4 = None


class quiet_hdf5:
    """HDF5 prints a diagnostic stack to fd 2 for every optional attribute (the _Quantize*
    ones) that netCDF-C probes while netCDF4-python opens the variables of a NetCDF-4 file;
    real errors still raise. fd 2 is process-wide, hence one file at a time."""

    _lock = threading.Lock()

    def __enter__(self):
        self._lock.acquire()
        self.saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)

    def __exit__(self, *exc):
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self._lock.release()


class EctInputError(Exception):
    """Bad input: the message names the file, the variable and the value."""


# Coordinates and constants that have a Time dimension in wrfout but are not model state.
# (Fields that merely do not change are dropped by their zero ensemble spread instead.)
COORDINATES = {
    "Times", "XTIME", "XLAT", "XLONG", "XLAT_U", "XLONG_U", "XLAT_V", "XLONG_V",
    "ZNU", "ZNW", "ZS", "DZS", "FNM", "FNP", "RDNW", "RDN", "DNW", "DN", "CFN", "CFN1",
    "RDX", "RDY", "RESM", "ZETATOP", "CF1", "CF2", "CF3", "P_TOP", "T00", "P00", "TLP",
    "TISO", "TLP_STRAT", "P_STRAT", "MAX_MSTFX", "MAX_MSTFY", "C1H", "C2H", "C1F", "C2F",
    "C3H", "C4H", "C3F", "C4F", "ITIMESTEP", "MAPFAC_M", "MAPFAC_U", "MAPFAC_V", "MAPFAC_MX",
    "MAPFAC_MY", "MAPFAC_UX", "MAPFAC_UY", "MAPFAC_VX", "MAPFAC_VY", "MF_VX_INV", "F", "E",
    "SINALPHA", "COSALPHA", "HGT", "PB", "PHB", "MUB", "FNDSOILW", "FNDSNOWH", "SAVE_TOPO_FROM_REAL",
}

HORIZONTAL = {
    ("south_north", "west_east"): ("MAPFAC_MX", "MAPFAC_MY"),
    ("south_north", "west_east_stag"): ("MAPFAC_UX", "MAPFAC_UY"),
    ("south_north_stag", "west_east"): ("MAPFAC_VX", "MAPFAC_VY"),
}

GRID_ATTRS = ("WEST-EAST_GRID_DIMENSION", "SOUTH-NORTH_GRID_DIMENSION",
              "BOTTOM-TOP_GRID_DIMENSION", "DX", "DY")


def grid_signature(nc, path):
    sig = []
    for a in GRID_ATTRS:
        if a not in nc.ncattrs():
            raise EctInputError(f"{path}: global attribute {a} missing: not a WRF output file")
        sig.append(float(np.asarray(nc.getncattr(a)).ravel()[0]))
    return np.array(sig)


def _times(nc, path):
    if "Times" not in nc.variables:
        raise EctInputError(f"{path}: variable Times missing: not a WRF output file")
    t = nc.variables["Times"][:]
    return [b"".join(np.asarray(row, dtype="S1").tolist()).decode() for row in t]


def _area_weights(nc, path, dims):
    names = HORIZONTAL.get(dims)
    if names is None:
        return None
    for n in names:
        if n not in nc.variables:
            raise EctInputError(f"{path}: variable {n} (map factor for area weights) missing")
    mx = np.asarray(nc.variables[names[0]][0], dtype=np.float64)
    my = np.asarray(nc.variables[names[1]][0], dtype=np.float64)
    return 1.0 / (mx * my)


def _vertical_weights(nc, path, vdim, nlev):
    if vdim in ("bottom_top", "bottom_top_stag"):
        if "DNW" not in nc.variables:
            raise EctInputError(f"{path}: variable DNW (eta thickness for vertical weights) missing")
        dnw = np.abs(np.asarray(nc.variables["DNW"][0], dtype=np.float64))
        if vdim == "bottom_top":
            return dnw
        w = np.zeros(nlev)
        w[:-1] += 0.5 * dnw
        w[1:] += 0.5 * dnw
        return w
    return np.ones(nlev)  # soil layers and other vertical dimensions: equal weights


def _check_finite(path, name, arr, t, times):
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = np.argwhere(bad)[0]
        # WRF order (i, k, j), 1-based, for a reader who looks the cell up in WRF.
        if arr.ndim == 3:
            k, j, i = (int(x) + 1 for x in idx)
            where = f"(i,k,j)=({i},{k},{j})"
        else:
            j, i = (int(x) + 1 for x in idx)
            where = f"(i,j)=({i},{j})"
        raise EctInputError(f"{path}: variable {name} at {times[t]} is {arr[tuple(idx)]} "
                            f"at {where} ({int(bad.sum())} non-finite values)")


def read_wrfout(paths):
    """Statistics of one run, read from its wrfout file(s) (frames in time order).

    Returns a dict: times (list of str), grid (array), levels {name: (T, K) level means},
    surface {name: (T,) means}, vweights {name: (K,) vertical weights}.
    """
    if isinstance(paths, str):
        paths = [paths]
    out = None
    for path in sorted(paths):
        with quiet_hdf5(), _open(path) as nc:
            one = _read_one(nc, path)
        if out is None:
            out = one
            continue
        if not np.array_equal(out["grid"], one["grid"]) or set(out["levels"]) != set(one["levels"]):
            raise EctInputError(f"{path}: another grid or another set of fields than {paths[0]}")
        out["times"] += one["times"]
        for d in ("levels", "surface"):
            for k in out[d]:
                out[d][k] = np.concatenate([out[d][k], one[d][k]])
    if out is None:
        raise EctInputError("no wrfout file given")
    order = np.argsort(out["times"], kind="stable")
    out["times"] = [out["times"][i] for i in order]
    for d in ("levels", "surface"):
        for k in out[d]:
            out[d][k] = out[d][k][order]
    return out


class _ClassicFile:
    """A NetCDF classic (CDF-1/CDF-2) file through scipy.io, with the few netCDF4.Dataset
    calls this module makes: for a Python that has scipy but not netCDF4 (a GPU host's);
    WRF writes such files with use_netcdf_classic = .true."""

    def __init__(self, path):
        from scipy.io import netcdf_file
        self.f = netcdf_file(path, "r", mmap=False)
        self.variables = {k: _ClassicVar(v) for k, v in self.f.variables.items()}

    def ncattrs(self):
        return list(self.f._attributes)

    def getncattr(self, a):
        return self.f._attributes[a]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()


class _ClassicVar:
    def __init__(self, v):
        self.v = v
        self.dimensions = v.dimensions
        self.dtype = v.data.dtype

    def __getitem__(self, idx):
        return self.v.data[idx]


def _open(path):
    """netCDF4.Dataset where netCDF4 is installed, else scipy's reader of classic files."""
    if netCDF4 is not None:
        try:
            nc = netCDF4.Dataset(path)
        except (OSError, RuntimeError) as e:
            raise EctInputError(f"{path}: cannot be read as NetCDF ({e})")
        nc.set_auto_mask(False)
        return nc
    try:
        return _ClassicFile(path)
    except ImportError:
        raise EctInputError("neither netCDF4 nor scipy is installed (tools/install_deps.sh installs both)")
    except (OSError, ValueError, TypeError) as e:
        raise EctInputError(f"{path}: cannot be read as NetCDF classic without netCDF4 ({e}); "
                            "WRF writes classic files with use_netcdf_classic = .true.")


def _read_one(nc, path):
    times = _times(nc, path)
    grid = grid_signature(nc, path)
    levels, surface, vweights = {}, {}, {}
    area_cache = {}
    for name, var in nc.variables.items():
        dims = var.dimensions
        if name in COORDINATES or not dims or dims[0] != "Time":
            continue
        if var.dtype.kind != "f" or len(dims) not in (3, 4):
            continue
        hdims = tuple(dims[-2:])
        if hdims not in area_cache:
            area_cache[hdims] = _area_weights(nc, path, hdims)
        area = area_cache[hdims]
        if area is None:
            continue
        data = np.asarray(var[:], dtype=np.float64)
        for t in range(data.shape[0]):
            _check_finite(path, name, data[t], t, times)
        if len(dims) == 4:
            levels[name] = np.einsum("tkji,ji->tk", data, area) / area.sum()
            vweights[name] = _vertical_weights(nc, path, dims[1], data.shape[1])
        else:
            surface[name] = np.einsum("tji,ji->t", data, area) / area.sum()
    return {"times": times, "grid": grid, "levels": levels, "surface": surface, "vweights": vweights}


def layer_means(level_means, weights, layers):
    """Mass-weighted means over `layers` contiguous layers of about equal weight.

    level_means: (..., K); weights: (K,). Returns (..., L) with L = min(layers, K).
    """
    k = level_means.shape[-1]
    layers = min(layers, k)
    cum = np.cumsum(weights) / weights.sum()
    # level k belongs to layer floor(L * (mass below its middle)).
    mid = cum - 0.5 * weights / weights.sum()
    which = np.minimum((mid * layers).astype(int), layers - 1)
    out = []
    for l in range(layers):
        sel = which == l
        if not sel.any():  # a very thick level can swallow a layer: merge, never divide by 0
            continue
        w = weights[sel]
        out.append((level_means[..., sel] * w).sum(-1) / w.sum())
    return np.stack(out, -1)


def save(stats, path):
    arrays = {"times": np.array(stats["times"]), "grid": stats["grid"]}
    for k, v in stats["levels"].items():
        arrays["levels:" + k] = v
        arrays["vweights:" + k] = stats["vweights"][k]
    for k, v in stats["surface"].items():
        arrays["surface:" + k] = v
    np.savez_compressed(path, **arrays)


def load(path):
    try:
        z = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise EctInputError(f"{path}: not a statistics file of this tool ({e})")
    with z:
        if "times" not in z or "grid" not in z:
            raise EctInputError(f"{path}: not a statistics file of this tool (no times/grid)")
        st = {"times": [str(t) for t in z["times"]], "grid": z["grid"], "levels": {},
              "surface": {}, "vweights": {}}
        for k in z.files:
            kind, _, name = k.partition(":")
            if kind in ("levels", "surface", "vweights"):
                st[kind][name] = z[k]
    return st


def load_run(path):
    """A run given as a statistics file (.npz), a wrfout file, or a member folder."""
    import glob
    import os
    if os.path.isdir(path):
        npz = os.path.join(path, "stats.npz")
        if os.path.exists(npz):
            return load(npz)
        outs = sorted(glob.glob(os.path.join(path, "wrfout_d01_*")))
        if not outs:
            raise EctInputError(f"{path}: folder holds neither stats.npz nor wrfout_d01_* files")
        return read_wrfout(outs)
    if not os.path.exists(path):
        raise EctInputError(f"{path}: no such file")
    if path.endswith(".npz"):
        return load(path)
    return read_wrfout([path])
