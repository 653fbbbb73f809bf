# Reference figures of the household risk on sdcMicro's testdata (issue 31 item 5), computed in R
# without the sdcMicro package (not installed here): sdcMicro's own steps written out in base R.
#   Rscript testdata_hier_risk.R PATH/TO/testdata.csv > testdata_hier_risk.json
# - freqCalc (R/freqCalc.r; no missing key value in testdata, so fk and Fk are plain counts and
#   weight sums per key combination);
# - indivRisk (R/indivRisk.R, method "approx", survey TRUE), its loop as written there;
# - measure_riskWORK's household part (R/measure_risk.R, fast_hier = TRUE): order by the
#   household id, by(..., function(x) 1 - prod(1 - x)), merge back, hier_risk_ER = sum.
# Keys as in sdcMicro's examples: urbrur, roof, walls, water, electcon, relat, sex;
# w = sampling_weight; hhId = ori_hid.
args <- commandArgs(trailingOnly = TRUE)
td <- read.csv(args[1])
keys <- c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex")
grp <- interaction(td[keys], drop = TRUE)
fk <- ave(rep(1, nrow(td)), grp, FUN = sum)
Fk <- ave(td$sampling_weight, grp, FUN = sum)
pk <- fk / Fk
N <- nrow(td)
rk <- rep(0, N)
for (k in 1:N) {
  if (fk[k] > 2) rk[k] <- pk[k] / (fk[k] - (1 - pk[k]))
  if (fk[k] == 2) rk[k] <- (pk[k] / (1 - pk[k])) - (((pk[k] / (1 - pk[k]))^2) * log(1 / pk[k]))
  if (fk[k] == 1) rk[k] <- (pk[k] / (1 - pk[k])) * log(1 / pk[k])
}
TF <- fk == Fk
rk[TF] <- 1 / fk[TF]
# measure_riskWORK, hid given, fast_hier = TRUE
hid <- td$ori_hid
ind <- order(hid)
dataX <- cbind(hid, rk)[ind, ]
ind <- order(c(1:nrow(dataX))[ind])
reshier <- by(dataX[, 2], dataX[, 1], function(x) 1 - prod(1 - x), simplify = TRUE)
reshier <- data.frame(cbind(reshier, unique(dataX[, 1])))
colnames(reshier) <- c("reshier", "hhid")
dataX <- data.frame(dataX[, 1])
colnames(dataX) <- c("hhid")
datX <- merge(dataX, reshier, all.x = TRUE)
hier <- datX$reshier[ind]
f <- function(x) sprintf("%.17g", x)
cat("{\n")
cat('  "keys": ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"],\n')
cat('  "weight": "sampling_weight", "household": "ori_hid",\n')
cat('  "n": ', N, ",\n", sep = "")
cat('  "households": ', length(unique(hid)), ",\n", sep = "")
cat('  "global_risk_ER": ', f(sum(rk)), ",\n", sep = "")
cat('  "hier_risk_ER": ', f(sum(hier, na.rm = TRUE)), ",\n", sep = "")
cat('  "hier_risk": ', f(sum(hier, na.rm = TRUE) / N), ",\n", sep = "")
cat('  "hier_risk_pct": ', f(100 * sum(hier, na.rm = TRUE) / N), ",\n", sep = "")
cat('  "hier_risk_max": ', f(max(hier)), ",\n", sep = "")
cat('  "hier_risk_first_40": [', paste(f(hier[1:40]), collapse = ", "), "]\n", sep = "")
cat("}\n")
