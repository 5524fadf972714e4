const string_form = async function (t) {
  await t.runForSteps(2);
  t.assert.equal(t.getStage().getVariable("down", false).value, "false", "string form");
  t.end();
}
const boolean_form = async function (t) {
  await t.runForSteps(2);
  t.assert.equal(t.getStage().getVariable("down", false).value, false, "boolean form");
  t.assert.equal(t.getStage().getVariable("word", false).value, "false", "a string variable, string form");
  t.end();
}
module.exports = [
  {test: string_form, name: 'string form', description: '', categories: []},
  {test: boolean_form, name: 'boolean form', description: '', categories: []},
];
