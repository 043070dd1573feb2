// Profiles (the CSV scripts/profile_operators.py writes): the committed sample reads completely,
// and every malformed line is an InputError at file:line:column.
#include <doctest/doctest.h>

#include <filesystem>

#include <twocs/config/profile_csv.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;
using test::where;

namespace {

InputError csv_error(const std::string& text) {
  return test::input_error_of([&] { (void)config::parse_profile_csv({"p.csv", text}); });
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

constexpr const char* header = "op,shape,dtype,measured_time,name\n";

} // namespace

TEST_CASE("the sample profile in the script's format reads completely") {
  const auto rows =
      config::parse_profile_csv(config::read_input(std::filesystem::path(TWOCS_TEST_DATA_DIR) / "sample_profile.csv"));
  REQUIRE(rows.size() == 28);
  CHECK(rows[0].name == "square.1024");
  CHECK(rows[0].kind == model::OpKind::gemm);
  CHECK(rows[0].dtype == model::Dtype::bf16);
  CHECK(rows[0].gemm->m == 1024);
  CHECK(rows[0].gemm->k == 1024);
  CHECK(rows[0].gemm->batch == 1);
  CHECK(rows[0].time.value() == doctest::Approx(21.985e-6));
  std::size_t batched = 0, memory = 0;
  for (const auto& r : rows) {
    batched += r.kind == model::OpKind::batched_gemm;
    if (!r.gemm) {
      ++memory;
      CHECK(r.bytes.value() > 0);
      CHECK(r.flops.value() > 0);
    }
  }
  CHECK(batched == 2);
  CHECK(memory == 7);
}

TEST_CASE("columns may come in any order, the name is optional, quotes and CRLF are fine") {
  const auto rows = config::parse_profile_csv(
      {"p.csv",
       "# comment\r\n\r\nmeasured_time,dtype,op,shape\r\n1.5ms,fp16,batched_gemm,\"m=64,n=64,k=64,batch=8\"\r\n"
       "2us,bf16,softmax,bytes=1024\n"});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].name.empty());
  CHECK(rows[0].gemm->batch == 8);
  CHECK(rows[0].time.value() == doctest::Approx(1.5e-3));
  CHECK(rows[1].bytes.value() == 1024);
  CHECK(rows[1].flops.value() == 0);
  const auto quoted =
      config::parse_profile_csv({"p.csv", std::string(header) + "gemm,\"m=1,n=1,k=1\",bf16,1us,\"a \"\"b\"\", c\"\n"});
  CHECK(quoted[0].name == "a \"b\", c");
}

TEST_CASE("bad profiles: the header") {
  const auto unknown = csv_error("op,shape,dtype,measured_tme\n");
  CHECK(where(unknown) == "p.csv:1:16");
  CHECK(unknown.fix() == "did you mean 'measured_time'?");
  const auto missing = csv_error("op,shape,measured_time\n");
  CHECK(where(missing) == "p.csv:1:1");
  CHECK(contains(missing.problem(), "lacks the column 'dtype'"));
  const auto twice = csv_error("op,shape,op,dtype,measured_time\n");
  CHECK(where(twice) == "p.csv:1:10");
  const auto empty = csv_error("# nothing\n");
  CHECK(contains(empty.problem(), "no measurements"));
  const auto no_rows = csv_error(header);
  CHECK(where(no_rows) == "p.csv:1:1");
}

TEST_CASE("bad profiles: the rows, located at the offending character") {
  const std::string h = header;
  CHECK(where(csv_error(h + "gemm,m=1,n=1,k=1,bf16,1us,x\n")) == "p.csv:2:1"); // unquoted commas: 7 fields
  CHECK(where(csv_error(h + "gemm,\"m=1,n=1,k=1,bf16,1us,x\n")) == "p.csv:2:6");
  CHECK(where(csv_error(h + "gemm,\"m=1,n=1,k=1\"x,bf16,1us,x\n")) == "p.csv:2:19");
  const auto op = csv_error(h + "gem,\"m=1,n=1,k=1\",bf16,1us,x\n");
  CHECK(where(op) == "p.csv:2:1");
  CHECK(op.fix() == "did you mean 'gemm'?");
  CHECK(where(csv_error(h + "gemm,\"m=1,n=1,k=1\",bf32,1us,x\n")) == "p.csv:2:20");
  const auto dim = csv_error(h + "gemm,\"m=1,n=0,k=1\",bf16,1us,x\n");
  CHECK(where(dim) == "p.csv:2:13");
  CHECK(contains(dim.problem(), "n must be a positive whole number"));
  const auto missing = csv_error(h + "batched_gemm,\"m=1,n=1,batch=2\",bf16,1us,x\n");
  CHECK(contains(missing.problem(), "missing 'k'"));
  const auto bytes = csv_error(h + "softmax,\"m=1\",bf16,1us,x\n");
  CHECK(where(bytes) == "p.csv:2:10");
  const auto unit = csv_error(h + "gemm,\"m=1,n=1,k=1\",bf16,1.5,x\n");
  CHECK(where(unit) == "p.csv:2:25");
  CHECK(contains(unit.problem(), "measured_time"));
  CHECK(where(csv_error(h + "gemm,\"m=1,n=1,k=1\",bf16,1.5xs,x\n")) == "p.csv:2:28");
  CHECK(where(csv_error(h + "gemm,\"m=1,n=1,k=1\",bf16,0us,x\n")) == "p.csv:2:25");
  CHECK(where(csv_error(h + "\n# c\ngemm,\"m=1,n=1,k=1\",bf16,1us,x\ngemm,x,bf16,1us,x\n")) == "p.csv:5:6");
}

TEST_CASE("the accumulation column: split or fast on FP8 GEMM rows, empty elsewhere") {
  const std::string h = "op,shape,dtype,measured_time,name,accumulation\n";
  const auto rows = config::parse_profile_csv(
      {"p.csv", h + "gemm,\"m=16,n=16,k=16\",fp8,1us,a,split\ngemm,\"m=16,n=16,k=16\",fp8,1us,b,fast\n"
                    "gemm,\"m=16,n=16,k=16\",fp8,1us,c,\ngemm,\"m=16,n=16,k=16\",bf16,1us,d,\n"});
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].accumulation == hardware::Fp8Accumulation::split);
  CHECK(rows[1].accumulation == hardware::Fp8Accumulation::fast);
  CHECK(rows[2].accumulation == hardware::Fp8Accumulation::any);
  CHECK(rows[3].accumulation == hardware::Fp8Accumulation::any);
  const auto unknown = csv_error(h + "gemm,\"m=16,n=16,k=16\",fp8,1us,a,slow\n");
  CHECK(where(unknown) == "p.csv:2:33");
  CHECK(contains(unknown.problem(), "allowed: split, fast"));
  const auto bf16 = csv_error(h + "gemm,\"m=16,n=16,k=16\",bf16,1us,a,split\n");
  CHECK(where(bf16) == "p.csv:2:34");
  CHECK(contains(bf16.problem(), "not an FP8 GEMM"));
  CHECK(where(csv_error(h + "softmax,bytes=1024,fp8,1us,a,fast\n")) == "p.csv:2:30");
}

TEST_CASE("the kernel column names a fused attention row's implementation, and only a fused attention row's") {
  const std::string h = "op,shape,dtype,measured_time,kernel\n";
  const auto rows = config::parse_profile_csv(
      {"p.csv", h + "flash_forward,\"heads=8,seq=512,head_dim=128,causal=1\",bf16,21us,cudnn\n"
                    "flash_backward,\"heads=8,seq=512,head_dim=128,causal=1\",bf16,65us,flash2\n"
                    "flash_forward,\"heads=8,seq=1024,head_dim=128,causal=1\",bf16,47us,\n"
                    "gemm,\"m=16,n=16,k=16\",bf16,1us,\n"});
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].kernel == "cudnn");
  CHECK(rows[1].kernel == "flash2");
  CHECK(rows[2].kernel.empty()); // any implementation
  CHECK(rows[3].kernel.empty());
  const auto gemm = csv_error(h + "gemm,\"m=16,n=16,k=16\",bf16,1us,cudnn\n");
  CHECK(where(gemm) == "p.csv:2:32");
  CHECK(contains(gemm.problem(), "fused attention"));
  CHECK(contains(gemm.fix(), "flash_forward"));
}
