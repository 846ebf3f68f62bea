export * from "./assembly/index";
