// See shell_words.h.
#include "shell_words.h"

#include <cstddef>
#include <string>

namespace tuneplane::fuzz {
namespace {

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  ShellLex run() {
    lexCode(/*until_paren=*/false);
    if (error_.empty() && i_ < text_.size()) error_ = "a ')' closes nothing at byte " + at();
    endWord();
    return {std::move(words_), std::move(error_)};
  }

 private:
  std::string at() const { return std::to_string(i_); }
  bool more() const { return error_.empty() && i_ < text_.size(); }
  char peek(std::size_t ahead = 0) const {
    return i_ + ahead < text_.size() ? text_[i_ + ahead] : '\0';
  }

  void add(char c, bool literal) {
    word_.text += c;
    word_.literal.push_back(literal);
    in_word_ = true;
  }
  void endWord() {
    if (in_word_) words_.push_back(std::move(word_));
    word_ = {};
    in_word_ = false;
  }

  // Unquoted code: the script's top level, or the inside of $( … ) (until its ')').
  void lexCode(bool until_paren) {
    int parens = 0;
    while (more()) {
      const char c = text_[i_];
      if (c == '#' && !in_word_) {
        while (i_ < text_.size() && text_[i_] != '\n') ++i_;
      } else if (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' ||
                 c == '<' || c == '>') {
        endWord();
        ++i_;
      } else if (c == '(') {
        endWord();
        ++parens;
        ++i_;
      } else if (c == ')') {
        endWord();
        if (parens == 0) {
          if (!until_paren) error_ = "a ')' closes nothing at byte " + at();
          return;  // the caller consumes it
        }
        --parens;
        ++i_;
      } else if (c == '\\') {
        if (peek(1) == '\n') {
          i_ += 2;  // a line continuation
        } else if (i_ + 1 < text_.size()) {
          add(text_[i_ + 1], true);
          i_ += 2;
        } else {
          error_ = "a backslash ends the text";
        }
      } else if (c == '\'') {
        lexSingle();
      } else if (c == '"') {
        lexDouble();
      } else if (c == '$') {
        lexDollar();
      } else if (c == '`') {
        lexBackticks();
      } else {
        add(c, false);
        ++i_;
      }
    }
    if (until_paren && error_.empty()) error_ = "an unclosed $( at the end";
  }

  void lexSingle() {
    const std::size_t open = i_++;
    while (i_ < text_.size() && text_[i_] != '\'') add(text_[i_++], true);
    if (i_ >= text_.size()) {
      error_ = "an unclosed ' from byte " + std::to_string(open);
      return;
    }
    ++i_;
    in_word_ = true;  // '' is an (empty) word
  }

  // $'…': backslash escapes are kept as written (two characters), all literal.
  void lexAnsiC() {
    const std::size_t open = i_;
    i_ += 2;
    while (i_ < text_.size() && text_[i_] != '\'') {
      if (text_[i_] == '\\' && i_ + 1 < text_.size()) add(text_[i_++], true);
      add(text_[i_++], true);
    }
    if (i_ >= text_.size()) {
      error_ = "an unclosed $' from byte " + std::to_string(open);
      return;
    }
    ++i_;
    in_word_ = true;
  }

  void lexDouble() {
    const std::size_t open = i_++;
    in_word_ = true;
    while (more() && text_[i_] != '"') {
      const char c = text_[i_];
      if (c == '\\' && i_ + 1 < text_.size()) {
        const char next = text_[i_ + 1];
        if (next == '\n') {
          i_ += 2;
        } else if (next == '$' || next == '`' || next == '"' || next == '\\') {
          add(next, true);
          i_ += 2;
        } else {
          add(c, true);
          ++i_;
        }
      } else if (c == '$' && (peek(1) == '(' || peek(1) == '{')) {
        lexDollar();
      } else if (c == '`') {
        lexBackticks();
      } else {
        add(c, true);
        ++i_;
      }
    }
    if (!error_.empty()) return;
    if (i_ >= text_.size()) {
      error_ = "an unclosed \" from byte " + std::to_string(open);
      return;
    }
    ++i_;
  }

  void lexDollar() {
    if (peek(1) == '\'') return lexAnsiC();
    if (peek(1) == '(') {
      // A command (or arithmetic) substitution: its words are words of their own; it stands
      // in the word around it as '$'.
      ShellWord outer = std::move(word_);
      const bool outer_in_word = in_word_;
      word_ = {};
      in_word_ = false;
      const std::size_t open = i_;
      i_ += 2;
      lexCode(/*until_paren=*/true);
      if (!error_.empty()) return;
      if (peek() != ')') {
        error_ = "an unclosed $( from byte " + std::to_string(open);
        return;
      }
      ++i_;
      endWord();
      word_ = std::move(outer);
      in_word_ = outer_in_word;
      add('$', false);
      return;
    }
    if (peek(1) == '{') return lexBraces();
    add('$', false);
    ++i_;
  }

  // ${…}: skipped to its '}', quotes inside it included; stands as '$'.
  void lexBraces() {
    const std::size_t open = i_;
    i_ += 2;
    int depth = 1;
    while (i_ < text_.size() && depth > 0) {
      const char c = text_[i_];
      if (c == '\\') {
        i_ += 2;
        continue;
      }
      if (c == '$' && peek(1) == '\'') {
        i_ += 2;
        while (i_ < text_.size() && text_[i_] != '\'') i_ += text_[i_] == '\\' ? 2 : 1;
      } else if (c == '\'') {
        ++i_;
        while (i_ < text_.size() && text_[i_] != '\'') ++i_;
      } else if (c == '"') {
        ++i_;
        while (i_ < text_.size() && text_[i_] != '"') i_ += text_[i_] == '\\' ? 2 : 1;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}') {
        --depth;
      }
      ++i_;
    }
    if (depth > 0) {
      error_ = "an unclosed ${ from byte " + std::to_string(open);
      return;
    }
    add('$', false);
  }

  void lexBackticks() {
    const std::size_t open = i_++;
    while (i_ < text_.size() && text_[i_] != '`') i_ += text_[i_] == '\\' ? 2 : 1;
    if (i_ >= text_.size()) {
      error_ = "an unclosed ` from byte " + std::to_string(open);
      return;
    }
    ++i_;
    add('$', false);
  }

  std::string_view text_;
  std::size_t i_ = 0;
  std::vector<ShellWord> words_;
  ShellWord word_;
  bool in_word_ = false;
  std::string error_;
};

}  // namespace

ShellLex lexShell(std::string_view script) {
  return Lexer(script).run();
}

}  // namespace tuneplane::fuzz
