library(MASS); library(palmerpenguins)
split <- function(df, name) {
  dir.create(name, showWarnings = FALSE)
  set.seed(1); idx <- sample(nrow(df), round(nrow(df) / 5))
  write.csv(df[-idx, ], file.path(name, "train.csv"))
  write.csv(df[idx, ], file.path(name, "test.csv"))
}
split(airquality, "airquality-r")
split(survey, "survey-r")
split(as.data.frame(penguins), "penguins-r")
