#include "compiler/lang/schema.h"

#include <map>
#include <memory>
#include <string>

namespace policy::lang {

const FieldSchema* RecordSchema::Find(std::string_view field) const {
  for (const FieldSchema& f : fields) {
    if (f.name == field) return &f;
  }
  return nullptr;
}

Schema::Schema(TypeTable& t) {
  // Records first (fields refer to them), then fields in table order.
  std::map<std::string_view, RecordSchema*> by_name;
  for (std::string_view name : {"Pod", "NodeAffinity", "Term", "Requirement", "PreferredTerm", "Toleration", "Node",
                                "Taint", "PodAffinity", "PodAffinityTerm", "WeightedPodAffinityTerm", "SpreadConstraint", "PodPort",
                           "UsedPort", "Volume", "VolumeCandidate", "AttachedVolume", "VolumeLimit", "Disk", "Device"}) {
    owned_.push_back(std::make_unique<RecordSchema>(RecordSchema{name, {}}));
    by_name[name] = owned_.back().get();
    records_.push_back(owned_.back().get());
  }
  [[maybe_unused]] const RecordSchema* Pod = by_name["Pod"];
  const RecordSchema* NodeAffinity = by_name["NodeAffinity"];
  const RecordSchema* Term = by_name["Term"];
  const RecordSchema* Requirement = by_name["Requirement"];
  const RecordSchema* PreferredTerm = by_name["PreferredTerm"];
  const RecordSchema* Toleration = by_name["Toleration"];
  [[maybe_unused]] const RecordSchema* Node = by_name["Node"];
  const RecordSchema* Taint = by_name["Taint"];
  const RecordSchema* PodAffinity = by_name["PodAffinity"];
  const RecordSchema* PodAffinityTerm = by_name["PodAffinityTerm"];
  const RecordSchema* WeightedPodAffinityTerm = by_name["WeightedPodAffinityTerm"];
  const RecordSchema* SpreadConstraint = by_name["SpreadConstraint"];
  const RecordSchema* PodPort = by_name["PodPort"];
  const RecordSchema* UsedPort = by_name["UsedPort"];
  const RecordSchema* Volume = by_name["Volume"];
  const RecordSchema* VolumeCandidate = by_name["VolumeCandidate"];
  const RecordSchema* AttachedVolume = by_name["AttachedVolume"];
  const RecordSchema* VolumeLimit = by_name["VolumeLimit"];
  const RecordSchema* Disk = by_name["Disk"];
  const RecordSchema* Device = by_name["Device"];
#define FIELD(id, record, name, type, side, doc) \
  by_name[#record]->fields.push_back(FieldSchema{FieldId::id, name, type, Side::side, doc});
#include "compiler/lang/schema.def"
#undef FIELD
  pod_ = t.Record(by_name["Pod"]);
  node_ = t.Record(by_name["Node"]);
}

}  // namespace policy::lang
