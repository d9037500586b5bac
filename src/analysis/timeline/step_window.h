// The window of `smprof export --steps FIRST-LAST`: from the start of step
// FIRST to the end of step LAST, on the job's wall clock, among the rank
// processes of the export. Found in C++ from the plan the export walks, so
// the steps are named and numbered exactly as the summary and the steps
// table do (StepMatcher), and only the selected ranks' annotations are read.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/timeline/timeline_walker.h"
#include "smprof/status.h"

namespace smprof::analysis {

// The earliest start and latest end of the steps numbered [steps.first,
// steps.last] in `plan`'s rank processes; false when none ran such a step.
// A step's number is its name's (the pattern's first group), else its
// ordinal among its stream's steps. Reads only the annotations, one frame
// at a time; damaged files are read up to their damage, silently (the walk
// reports them). Throws std::regex_error on a bad `step_pattern`.
bool FindStepWindow(const TimelinePlan& plan, const StepRange& steps, const std::string& step_pattern,
                    std::int64_t* start_wall_ns, std::int64_t* end_wall_ns);

// Narrows `options`'s window to its steps' window (nothing without
// `options->steps`). kInvalidArgument for a bad step pattern, for a range
// that no selected rank ran (then `*no_step` is true, when given: "no step
// FIRST-LAST[ for ranks [..]]") and for a window left empty.
Status ApplyStepWindow(const TimelinePlan& plan, TimelineOptions* options, bool* no_step = nullptr);

}  // namespace smprof::analysis
