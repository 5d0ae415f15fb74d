// Python's str() of json.load values, as chakra_converter writes inputs and
// outputs. Expected texts are what CPython 3.11 prints.
#include "convert/python_repr.h"

#include <gtest/gtest.h>

#include <string>

namespace chakrashim::tools::convert {
namespace {

std::string py_float(double v) {
  std::string out;
  append_py_float(out, v);
  return out;
}

std::string py_str(std::string_view s) {
  std::string out;
  append_py_str(out, s);
  return out;
}

TEST(PythonRepr, FloatsAsReprPrintsThem) {
  EXPECT_EQ(py_float(0.5), "0.5");
  EXPECT_EQ(py_float(3.0), "3.0");
  EXPECT_EQ(py_float(-0.0), "-0.0");
  EXPECT_EQ(py_float(0.0), "0.0");
  EXPECT_EQ(py_float(1e-05), "1e-05");
  EXPECT_EQ(py_float(0.0001), "0.0001");
  EXPECT_EQ(py_float(1e16), "1e+16");
  EXPECT_EQ(py_float(1e22), "1e+22");
  EXPECT_EQ(py_float(9999999999999998.0), "9999999999999998.0");
  EXPECT_EQ(py_float(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(py_float(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(py_float(1.5e300), "1.5e+300");
  EXPECT_EQ(py_float(5e-324), "5e-324");
  EXPECT_EQ(py_float(123456789012345678.0), "1.2345678901234568e+17");
  EXPECT_EQ(py_float(-2.25), "-2.25");
}

TEST(PythonRepr, StringsInReprQuotesAndEscapes) {
  EXPECT_EQ(py_str("abc"), "'abc'");
  EXPECT_EQ(py_str("it's"), "\"it's\"");
  EXPECT_EQ(py_str("say \"hi\" it's"), "'say \"hi\" it\\'s'");
  EXPECT_EQ(py_str("a\nb\t\\"), "'a\\nb\\t\\\\'");
  EXPECT_EQ(py_str("\r"), "'\\r'");
  EXPECT_EQ(py_str("\x01"), "'\\x01'");
  EXPECT_EQ(py_str("\x7f"), "'\\x7f'");
  EXPECT_EQ(py_str("\xc3\xa9"), "'\xc3\xa9'");                // é
  EXPECT_EQ(py_str("\xc2\xa0"), "'\\xa0'");                   // no-break space
  EXPECT_EQ(py_str("\xe2\x80\xa8"), "'\\u2028'");             // line separator
  EXPECT_EQ(py_str("\xef\xbb\xbf"), "'\\ufeff'");             // BOM
  EXPECT_EQ(py_str("\xf0\x9f\x98\x80"), "'\xf0\x9f\x98\x80'");  // an emoji
  EXPECT_EQ(py_str(""), "''");
}

TEST(PythonRepr, NestedValuesAsStrPrintsAList) {
  // str(json.loads('[[1, 2.5, "x"], null, true, {"k": [1]}, {}, 1234...890, 1E5, -0]'))
  std::string out;
  PyReprWriter w(out);
  w.begin_list();
  w.begin_list();
  w.integer(1);
  w.number_token("2.5", 2.5);
  w.string("x");
  w.end_list();
  w.null();
  w.boolean(true);
  w.begin_dict();
  w.key("k");
  w.begin_list();
  w.integer(1);
  w.end_list();
  w.end_dict();
  w.begin_dict();
  w.end_dict();
  w.number_token("123456789012345678901234567890", 1.2345678901234568e+29);
  w.number_token("1E5", 1e5);
  w.integer(0);
  w.end_list();
  EXPECT_EQ(out, "[[1, 2.5, 'x'], None, True, {'k': [1]}, {}, 123456789012345678901234567890, 100000.0, 0]");
}

TEST(PythonRepr, DictsSeparateEntries) {
  std::string out;
  PyReprWriter w(out);
  w.begin_dict();
  w.key("a");
  w.integer(1);
  w.key("b");
  w.begin_list();
  w.end_list();
  w.end_dict();
  EXPECT_EQ(out, "{'a': 1, 'b': []}");
}

}  // namespace
}  // namespace chakrashim::tools::convert
