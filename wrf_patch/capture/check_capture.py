#!/usr/bin/env python3
"""Check capture files against docs/capture_format.md (version 1) using only `ncdump -h`.

usage: check_capture.py FILE.nc [FILE.nc ...]
Prints one line per file (OK or the list of problems); exit status 1 if any file fails.
"""
import re
import subprocess
import sys

COMMON_GLOBALS = ["capture_format", "kernel", "wrf_version", "case_name", "itimestep", "dt",
                  "ids", "ide", "jds", "jde", "kds", "kde", "its", "ite", "jts", "jte", "kts", "kte",
                  "region_i0", "region_j0", "region_k0", "real_kind", "source"]

D3 = ("south_north", "bottom_top", "west_east")
D2 = ("south_north", "west_east")
WSM5_VARS = {v: D3 for v in ["th", "qv", "qc", "qr", "qi", "qs", "rho", "pii", "p", "dz",
                             "th_out", "qv_out", "qc_out", "qr_out", "qi_out", "qs_out"]}
WSM5_VARS.update({v: D2 for v in ["rainnc", "snownc", "rainnc_out", "snownc_out",
                                  "rainncv_out", "snowncv_out", "sr_out"]})
WSM5_ATTS = ["delt", "g", "cpd", "cpv", "rd", "rv", "t0c", "ep1", "ep2", "qmin", "xls", "xlv0",
             "xlf0", "den0", "denr", "cliq", "cice", "psat", "dens"]

S4 = ("scalar", "south_north", "bottom_top_stag", "west_east")
S3 = ("south_north", "bottom_top_stag", "west_east")
PD_VARS = {"field": S4, "field_old": S4, "tendency_out": S4, "ru": S3, "rv": S3, "rom": S3}
PD_VARS.update({v: D2 for v in ["mut", "mub", "mu_old", "msftx", "msfty"]})
PD_VARS.update({v: ("bottom_top_stag",) for v in ["c1", "c2", "fzm", "fzp", "rdzw"]})
PD_ATTS = ["scalar_names", "rdx", "rdy", "dt_rk", "time_step", "h_sca_adv_order",
           "v_sca_adv_order", "periodic_x", "periodic_y", "symmetric_xs", "symmetric_xe",
           "symmetric_ys", "symmetric_ye", "open_xs", "open_xe", "open_ys", "open_ye",
           "specified", "nested", "polar", "spec_zone"]

R2_CHEM = ["sulf", "ora1", "ora2", "so2", "eth", "hc5", "hc8", "tol", "xyl", "tpan", "hono", "h2o2",
           "n2o5", "hc3", "ch4", "paa", "hno4", "op1", "csl", "pan", "ol2", "hno3", "co", "iso", "olt",
           "oli", "dcb", "gly", "ket", "mgly", "op2", "hcho", "o3", "onit", "ald", "ho2", "ho", "no3",
           "aco3", "no", "no2"]
R2_RAD = ["o1d", "o3p", "xno2", "tolp", "xylp", "oltp", "oln", "xo2", "ol2p", "hc5p", "hc8p", "tco3",
          "olip", "ketp", "mo2", "hc3p", "ethp"]
R2_PH = ["ph_" + n for n in ["no2", "o31d", "o33p", "hno2", "hno3", "hno4", "no3o2", "no3o", "h2o2",
                             "ch2om", "ch2or", "ch3cho", "ch3o2h", "ch3coch3", "ch3coo2h", "ch3coc2h5",
                             "hcocho", "hcochob", "ch3cocho", "hcochest", "ch3ono2"]]
R2_VARS = {v: D3 for n in R2_CHEM + R2_RAD for v in (n, n + "_out")}
R2_VARS.update({v: D3 for v in ["qv", "t_phy", "p_phy", "rho_phy"] + R2_PH})
R2_VARS["vdrog3_out"] = ("ldrog",) + D3
R2_ATTS = ["dtstepc", "p_nu0", "method"]


def tile_problems(dims, g):
    """wsm5 and radm2sorg_kpp store the tile its:ite, kts:kte, jts:jte itself."""
    problems = []
    try:
        nx = int(g["ite"]) - int(g["its"]) + 1
        nz = int(g["kte"]) - int(g["kts"]) + 1
        ny = int(g["jte"]) - int(g["jts"]) + 1
        if (int(dims["west_east"]), int(dims["bottom_top"]), int(dims["south_north"])) != (nx, nz, ny):
            problems.append("dimensions do not match the tile its:ite,kts:kte,jts:jte")
        if (g["region_i0"], g["region_j0"], g["region_k0"]) != (g["its"], g["jts"], g["kts"]):
            problems.append("region start is not the tile start")
    except (KeyError, ValueError) as e:
        problems.append("cannot check sizes: %s" % e)
    return problems


def parse(path):
    out = subprocess.run(["ncdump", "-hs", path], check=True, capture_output=True, text=True).stdout
    dims, vars_, gatts = {}, {}, {}
    section = None
    for line in out.splitlines():
        s = line.strip()
        if s == "dimensions:":
            section = "dims"; continue
        if s == "variables:":
            section = "vars"; continue
        if s.startswith("// global attributes"):
            section = "globals"; continue
        if section == "dims":
            m = re.match(r"(\w+) = (\d+|UNLIMITED)", s)
            if m:
                dims[m.group(1)] = m.group(2)
        elif section == "vars":
            m = re.match(r"(float|double|int|short|byte|char) (\w+)\(([^)]*)\) ;", s)
            if m:
                cur = m.group(2)
                vars_[cur] = {"type": m.group(1), "dims": tuple(x.strip() for x in m.group(3).split(",")),
                              "atts": {}}
                continue
            m = re.match(r"(\w+):(\w+) = (.*) ;", s)
            if m and m.group(1) in vars_:
                vars_[m.group(1)]["atts"][m.group(2)] = m.group(3)
        elif section == "globals":
            m = re.match(r":(\w+) = (.*) ;", s)
            if m:
                gatts[m.group(1)] = m.group(2)
    return dims, vars_, gatts


def check(path):
    problems = []
    dims, vars_, g = parse(path)
    for a in COMMON_GLOBALS:
        if a not in g:
            problems.append("missing global attribute " + a)
    if g.get("capture_format") != "1":
        problems.append("capture_format is not 1")
    kernel = g.get("kernel", "").strip('"')
    if kernel == "wsm5":
        want_vars, want_atts = WSM5_VARS, WSM5_ATTS
        problems += tile_problems(dims, g)
    elif kernel == "radm2sorg_kpp":
        want_vars, want_atts = R2_VARS, R2_ATTS
        problems += tile_problems(dims, g)
    elif kernel == "advect_scalar_pd":
        want_vars, want_atts = PD_VARS, PD_ATTS
        try:
            nz = int(dims["bottom_top_stag"])
            if nz != int(g["kde"]) - int(g["kts"]) + 1:
                problems.append("bottom_top_stag is not kts:kde")
            names = g["scalar_names"].strip('"').split(",")
            if len(names) != int(dims["scalar"]):
                problems.append("scalar_names has %d names for %s scalars" % (len(names), dims["scalar"]))
        except (KeyError, ValueError) as e:
            problems.append("cannot check sizes: %s" % e)
    else:
        return ["unknown kernel %r" % kernel]
    for a in want_atts:
        if a not in g:
            problems.append("missing attribute " + a)
    real_t = "double" if g.get("real_kind") == "8" else "float"
    for v, d in want_vars.items():
        if v not in vars_:
            problems.append("missing variable " + v)
            continue
        if vars_[v]["dims"] != d:
            problems.append("%s has dims %s, want %s" % (v, vars_[v]["dims"], d))
        if vars_[v]["type"] != real_t:
            problems.append("%s is %s, want %s" % (v, vars_[v]["type"], real_t))
    for v, info in vars_.items():
        for a in ("units", "description"):
            if a not in info["atts"]:
                problems.append("%s has no %s" % (v, a))
        if info["atts"].get("_DeflateLevel") is None:
            problems.append("%s is not compressed" % v)
    return problems


def main(argv):
    bad = 0
    for p in argv[1:]:
        pr = check(p)
        if pr:
            bad += 1
            print("FAIL %s: %s" % (p, "; ".join(pr)))
        else:
            print("OK   %s" % p)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
