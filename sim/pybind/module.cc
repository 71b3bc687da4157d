// lfsim._core: the C++ run loop seen from Python. Contract: sim/CORE_API.md.
#include "lfsim-attributes.h"
#include "lfsim-file-error.h"
#include "lfsim-run.h"
#include "lfsim-topology.h"
#include "lfsim-workload.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <malloc.h>
#include <memory>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace
{

// Hands a column to numpy without copying: the vector moves to the heap, a capsule owns it.
py::array
ToNumpy(std::vector<double>&& v)
{
    auto* owned = new std::vector<double>(std::move(v));
    py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<double>*>(p); });
    return py::array_t<double>({owned->size()}, {sizeof(double)}, owned->data(), owner);
}

// A column of its kind: the doubles as they are, or converted (a copy) to int64 or bool. An
// Int column holding a NaN (nothing to count) stays float64: pandas has no NaN in int64.
py::array
ColumnToNumpy(std::vector<double>&& v, lfsim::ColumnKind kind)
{
    if (kind == lfsim::ColumnKind::Bool)
    {
        py::array_t<bool> out({py::ssize_t(v.size())}, {py::ssize_t(sizeof(bool))});
        auto* p = out.mutable_data();
        for (size_t i = 0; i < v.size(); ++i)
        {
            p[i] = v[i] != 0;
        }
        return out;
    }
    if (kind == lfsim::ColumnKind::Int
        && std::none_of(v.begin(), v.end(), [](double x) { return std::isnan(x); }))
    {
        py::array_t<int64_t> out({py::ssize_t(v.size())}, {py::ssize_t(sizeof(int64_t))});
        auto* p = out.mutable_data();
        for (size_t i = 0; i < v.size(); ++i)
        {
            p[i] = int64_t(v[i]);
        }
        return out;
    }
    return ToNumpy(std::move(v));
}

const char*
KindName(lfsim::ColumnKind kind)
{
    switch (kind)
    {
        case lfsim::ColumnKind::Int:
            return "int";
        case lfsim::ColumnKind::Bool:
            return "bool";
        default:
            return "real";
    }
}

py::dict
TablesToDict(std::map<std::string, lfsim::Table>& tables)
{
    py::dict out;
    for (auto& [name, t] : tables)
    {
        py::dict cols;
        for (size_t i = 0; i < t.Columns().size(); ++i)
        {
            cols[py::str(t.Columns()[i])] = ColumnToNumpy(std::move(t.Column(i)), t.Kinds()[i]);
        }
        out[py::str(name)] = cols;
    }
    return out;
}

/// {table: {column: labels name}} for the columns whose values index a list of labels.
py::dict
LabelRefs(const std::map<std::string, lfsim::Table>& tables)
{
    py::dict out;
    for (const auto& [name, t] : tables)
    {
        py::dict refs;
        for (size_t i = 0; i < t.Columns().size(); ++i)
        {
            if (!t.LabelRefs()[i].empty())
            {
                refs[py::str(t.Columns()[i])] = t.LabelRefs()[i];
            }
        }
        if (!refs.empty())
        {
            out[py::str(name)] = refs;
        }
    }
    return out;
}

std::string
Str(const py::handle& h)
{
    return py::str(h).cast<std::string>();
}

/// {"type_id": str, "attributes": {name: str}, "tables": {name: [{column: str}]}} -> config.
lfsim::InstanceConfig
Instance(const py::handle& h, const std::string& name)
{
    lfsim::InstanceConfig c;
    py::dict d = h.cast<py::dict>();
    c.name = name;
    c.typeId = Str(d["type_id"]);
    if (d.contains("attributes"))
    {
        for (auto kv : d["attributes"].cast<py::dict>())
        {
            c.attributes.emplace_back(Str(kv.first), Str(kv.second));
        }
    }
    if (d.contains("tables"))
    {
        for (auto kv : d["tables"].cast<py::dict>())
        {
            lfsim::Rows& rows = c.tables[Str(kv.first)];
            for (auto row : kv.second)
            {
                std::map<std::string, std::string> r;
                for (auto cell : row.cast<py::dict>())
                {
                    r[Str(cell.first)] = Str(cell.second);
                }
                rows.push_back(std::move(r));
            }
        }
    }
    return c;
}

py::dict
RunPy(const py::dict& config, const py::object& progress)
{
    lfsim::RunConfig cfg;
    lfsim::EnsureTimeResolution();
    cfg.fabric = Str(config["fabric"]);
    cfg.seed = config["seed"].cast<uint32_t>();
    for (const char* key : {"stop_time", "sample_interval"})
    {
        std::string v = config.contains(key) ? Str(config[key]) : "0s";
        ns3::Time t;
        if (!lfsim::ParseTime(v, &t))
        {
            throw py::value_error(
                std::string(key) + ": got '" + v
                + "'; accepted: a time with a unit (s, ms, us, ns, ps), e.g. 2ms");
        }
        (std::string(key) == "stop_time" ? cfg.stopTime : cfg.sampleInterval) = t;
    }
    if (config.contains("record"))
    {
        for (auto r : config["record"])
        {
            cfg.record.push_back(Str(r));
        }
    }
    if (config.contains("attributes"))
    {
        for (auto item : config["attributes"].cast<py::dict>())
        {
            std::string tid = Str(item.first);
            for (auto kv : item.second.cast<py::dict>())
            {
                cfg.attributes.push_back({tid, Str(kv.first), Str(kv.second)});
            }
        }
    }
    if (config.contains("topology") && !config["topology"].is_none())
    {
        cfg.topology = Instance(config["topology"], "topology");
    }
    if (config.contains("workloads"))
    {
        for (auto w : config["workloads"])
        {
            cfg.workloads.push_back(Instance(w, Str(w.cast<py::dict>()["name"])));
        }
    }
    if (config.contains("faults"))
    {
        for (auto f : config["faults"])
        {
            std::map<std::string, std::string> entry;
            for (auto kv : f.cast<py::dict>())
            {
                entry[Str(kv.first)] = Str(kv.second);
            }
            cfg.faults.push_back(std::move(entry));
        }
    }
    if (config.contains("spill_dir") && !config["spill_dir"].is_none())
    {
        cfg.spillDir = Str(config["spill_dir"]);
        if (config.contains("spill_rows"))
        {
            cfg.spillRows = config["spill_rows"].cast<size_t>();
        }
    }
    if (config.contains("stop_on_deadlock"))
    {
        cfg.stopOnDeadlock = config["stop_on_deadlock"].cast<bool>();
    }
    if (config.contains("SchedulerType") && !config["SchedulerType"].is_none())
    {
        cfg.schedulerType = Str(config["SchedulerType"]);
    }
    if (config.contains("pcap_dir") && !config["pcap_dir"].is_none())
    {
        cfg.pcapDir = Str(config["pcap_dir"]);
    }
    if (config.contains("pcap_ports") && !config["pcap_ports"].is_none())
    {
        for (auto p : config["pcap_ports"])
        {
            cfg.pcapPorts.push_back(Str(p));
        }
    }
    // Always ticking, so Ctrl-C interrupts a run; the Python callback every ~0.25 s of wall.
    auto last
        = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
    lfsim::ProgressFn fn = [progress, last](double s, double stop)
    {
        if (PyErr_CheckSignals() != 0)
        {
            throw py::error_already_set();
        }
        auto now = std::chrono::steady_clock::now();
        if (!progress.is_none() && now - *last > std::chrono::milliseconds(250))
        {
            *last = now;
            progress(s, stop);
        }
    };
    lfsim::RunResult r;
    try
    {
        r = lfsim::Run(cfg, fn);
        // The fabric is gone: its freed heap goes back to the system now, so that the results'
        // Python objects (and the files written from them) do not add to the run's peak
        // (FatTree k = 64 with an output directory: 1,231 -> 982 MiB).
        malloc_trim(0);
    }
    catch (const std::invalid_argument& e)
    {
        throw py::value_error(e.what());
    }
    catch (const lfsim::FileError& e)
    {
        // OSError with errno and file name, as Python's own writes raise it.
        PyErr_SetObject(PyExc_OSError, py::make_tuple(e.err, std::strerror(e.err), e.path).ptr());
        throw py::error_already_set();
    }

    py::dict metrics;
    for (auto& [k, v] : r.metrics)
    {
        if (auto* d = std::get_if<double>(&v))
        {
            metrics[py::str(k)] = *d;
        }
        else if (auto* l = std::get_if<std::vector<double>>(&v))
        {
            metrics[py::str(k)] = py::cast(*l);
        }
        else if (auto* b = std::get_if<bool>(&v))
        {
            metrics[py::str(k)] = py::bool_(*b);
        }
        else if (auto* n = std::get_if<int64_t>(&v))
        {
            metrics[py::str(k)] = py::int_(*n);
        }
        else if (auto* ln = std::get_if<std::vector<int64_t>>(&v))
        {
            metrics[py::str(k)] = py::cast(*ln);
        }
        else if (auto* ls = std::get_if<std::vector<std::string>>(&v))
        {
            metrics[py::str(k)] = py::cast(*ls);
        }
        else
        {
            metrics[py::str(k)] = std::get<std::string>(v);
        }
    }
    py::dict out;
    out["sim_time_s"] = r.simTimeS;
    out["events"] = r.events;
    out["build_wall_s"] = r.buildWallS;
    out["events_wall_s"] = r.eventsWallS;
    out["metrics"] = metrics;
    // Series that spilled to files (spill_dir): their rows are there, not in the arrays.
    py::dict spilled;
    for (const auto& [name, t] : r.series)
    {
        if (!t.SpillPath().empty())
        {
            py::dict d;
            d["path"] = t.SpillPath();
            d["rows"] = t.Spilled();
            d["columns"] = t.Columns();
            std::vector<std::string> kinds;
            for (lfsim::ColumnKind k : t.Kinds())
            {
                kinds.push_back(KindName(k));
            }
            d["kinds"] = kinds;
            spilled[py::str(name)] = d;
        }
    }
    out["spilled"] = spilled;
    out["label_columns"] = LabelRefs(r.tables);
    out["series"] = TablesToDict(r.series);
    out["tables"] = TablesToDict(r.tables);
    out["labels"] = py::cast(r.labels);
    return out;
}

} // namespace

PYBIND11_MODULE(_core, m)
{
    m.doc() = "lfsim C++ core (ns-3.37)";
    m.def("fabrics",
          []
          {
              py::list out;
              for (const auto& f : lfsim::Fabrics())
              {
                  py::dict d;
                  d["name"] = f.name;
                  d["description"] = f.description;
                  d["type_ids"] = f.typeIds;
                  py::dict rec;
                  for (const auto& [n, desc] : f.recorders)
                  {
                      rec[py::str(n)] = desc;
                  }
                  d["recorders"] = rec;
                  d["open"] = f.openFabric;
                  out.append(d);
              }
              return out;
          });
    m.def("attributes",
          [](const std::string& tid)
          {
              py::list out;
              try
              {
                  for (const auto& a : lfsim::Attributes(tid))
                  {
                      py::dict d;
                      d["name"] = a.name;
                      d["value_type"] = a.valueType;
                      d["info"] = a.info;
                      d["default"] = a.defaultValue;
                      d["help"] = a.help;
                      // A part's attribute listed under its whole (RoceSwitch's Kmin): the
                      // part that declares it (ns3::SwitchMarker).
                      d["declared_by"] = a.typeId;
                      out.append(d);
                  }
              }
              catch (const std::invalid_argument& e)
              {
                  throw py::value_error(e.what());
              }
              return out;
          });
    m.def(
        "check_value",
        [](const std::string& tid, const std::string& attr, const std::string& value) -> py::object
        {
            std::string why;
            try
            {
                why = lfsim::CheckValue(tid, attr, value);
            }
            catch (const std::invalid_argument& e)
            {
                throw py::value_error(e.what());
            }
            return why.empty() ? py::object(py::none()) : py::object(py::str(why));
        });
    m.def("presets",
          [](const std::string& tid)
          {
              py::list out;
              for (const auto& p : lfsim::Presets(tid))
              {
                  py::dict d;
                  d["name"] = p.name;
                  d["description"] = p.description;
                  py::list values;
                  for (const auto& v : p.values)
                  {
                      values.append(py::make_tuple(v[0], v[1], v[2]));
                  }
                  d["values"] = values;
                  out.append(d);
              }
              return out;
          });
    m.def("choices",
          [](const std::string& tid, const std::string& attr)
          {
              py::list out;
              for (const auto& c : lfsim::Choices(tid, attr))
              {
                  py::dict d;
                  d["name"] = c.name;
                  d["type_id"] = c.value;
                  d["description"] = c.description;
                  d["fabrics"] = c.fabrics;
                  d["classes"] = c.classes;
                  out.append(d);
              }
              return out;
          });
    m.def("topologies",
          []
          {
              py::list out;
              for (const auto& t : lfsim::Topologies())
              {
                  py::dict d;
                  d["name"] = t.name;
                  d["type_id"] = t.typeId;
                  d["description"] = t.description;
                  out.append(d);
              }
              return out;
          });
    m.def("workloads",
          []
          {
              py::list out;
              for (const auto& w : lfsim::Workloads())
              {
                  py::dict d;
                  d["name"] = w.name;
                  d["type_id"] = w.typeId;
                  d["description"] = w.description;
                  d["fabrics"] = w.fabrics;
                  d["classes"] = w.classes;
                  out.append(d);
              }
              return out;
          });
    m.def("parents",
          [](const std::string& tid)
          {
              // The TypeId's ancestors below ns3::Object, nearest last: whose attributes a
              // configured instance also takes.
              std::vector<std::string> out;
              ns3::TypeId t;
              if (!ns3::TypeId::LookupByNameFailSafe(tid, &t))
              {
                  throw py::value_error("unknown class " + tid);
              }
              for (t = t.GetParent();
                   t.GetName() != "ns3::Object" && t.GetName() != "ns3::ObjectBase";
                   t = t.GetParent())
              {
                  out.insert(out.begin(), t.GetName());
              }
              return out;
          });
    m.def("schedulers", &lfsim::SchedulerTypes,
          "The ns-3 event schedulers a scenario's SchedulerType may name.");
    m.attr("DEFAULT_SCHEDULER") = lfsim::DEFAULT_SCHEDULER;
    m.def("run", &RunPy, py::arg("config"), py::arg("progress") = py::none());
}
