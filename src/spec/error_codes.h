// The stable error codes of the spec module. Scripts and tests match on these strings, so
// a code is never renamed or reused for another meaning. The site and registry parsers use
// the same suffixes under their own prefixes ("site.", "registry.").
#pragma once

namespace tuneplane::spec::codes {

inline constexpr const char* kParseError = "spec.parse_error";  // not YAML/JSON at all
inline constexpr const char* kWrongType = "spec.wrong_type";    // e.g. a list where a map goes
inline constexpr const char* kUnknownField = "spec.unknown_field";
inline constexpr const char* kDuplicateKey = "spec.duplicate_key";  // same key twice in a map
inline constexpr const char* kMissingField = "spec.missing_field";
inline constexpr const char* kUnsupportedApiVersion = "spec.unsupported_api_version";
inline constexpr const char* kUnknownKind = "spec.unknown_kind";
inline constexpr const char* kInvalidName = "spec.invalid_name";  // DNS label, env name, …
inline constexpr const char* kDuplicateName = "spec.duplicate_name";
inline constexpr const char* kInvalidDuration = "spec.invalid_duration";
inline constexpr const char* kNonPositive = "spec.non_positive";    // a count that must be >= 1
inline constexpr const char* kNegative = "spec.negative";           // a count that must be >= 0
inline constexpr const char* kOutOfRange = "spec.out_of_range";     // does not fit an int
inline constexpr const char* kInvalidValue = "spec.invalid_value";  // not one of the choices
inline constexpr const char* kEmptyList = "spec.empty_list";        // a list that needs entries
inline constexpr const char* kEmptyString = "spec.empty_string";
inline constexpr const char* kReservedEnv = "spec.reserved_env";  // TUNEPLANE_* / SLURM_* / tp_*
inline constexpr const char* kNulByte = "spec.nul_byte";          // cannot reach a process's argv
inline constexpr const char* kInvalidUtf8 = "spec.invalid_utf8";  // JSON (body, store) holds UTF-8
inline constexpr const char* kUnreadableFile = "spec.unreadable_file";
// The framework section (framework_rules.h): what a custom job and a first-class framework
// (llamafactory) each take, and the LlamaFactory keys TunePlane owns.
inline constexpr const char* kCommandNotAllowed = "spec.command_not_allowed";  // llamafactory
inline constexpr const char* kConfigNotAllowed = "spec.config_not_allowed";    // custom
inline constexpr const char* kReservedConfigKey = "spec.reserved_config_key";  // output_dir, …
inline constexpr const char* kStageMismatch = "spec.stage_mismatch";  // config stage != task
// overwrite_output_dir: true or resume_from_checkpoint while spec.retry.resume is on.
inline constexpr const char* kResumeConflict = "spec.resume_conflict";
// An unquoted yes/no/on/off in the config: a string to YAML 1.2, a boolean to LlamaFactory.
inline constexpr const char* kAmbiguousValue = "spec.ambiguous_value";
inline constexpr const char* kTooDeep = "spec.too_deep";  // the config nests too deep
// Size limits. The first two concern the whole document with its YAML aliases expanded
// (document_measure.h; the site and registry have them too, under their prefixes): nothing
// of it was read. The last two concern one list, map or entry (spec_limits.h).
inline constexpr const char* kDocumentTooLarge = "spec.document_too_large";
inline constexpr const char* kTooManyValues = "spec.too_many_values";
inline constexpr const char* kTooManyEntries = "spec.too_many_entries";  // argv, env, labels
inline constexpr const char* kTooLong = "spec.too_long";  // one argv/env entry, a label value

}  // namespace tuneplane::spec::codes
