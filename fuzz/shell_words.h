// A lexer for the subset of bash the batch script renderer writes (slurm/script_renderer.h):
// words with their quoting removed, each character flagged with whether a quote or an escape
// made it literal. Enough to check that a user's string stays one quoted piece of one word
// wherever the script holds it, without running bash on every fuzz input (the replay tests
// also run `bash -n`). Handles: comments, '…', "…", $'…', backslash escapes and line
// continuations, $(…) and $((…)) (their words are words too), ${…}, `…`, and the operators
// that end a word (; & | ( ) < > and newlines). Not here-documents or `case` (the renderer
// writes neither).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tuneplane::fuzz {

struct ShellWord {
  std::string text;           // with quotes removed; an expansion stands as '$'
  std::vector<bool> literal;  // per character of text: quoted or escaped
};

struct ShellLex {
  std::vector<ShellWord> words;
  std::string error;  // empty when the text ended outside any quote or expansion
};

ShellLex lexShell(std::string_view script);

}  // namespace tuneplane::fuzz
