import Testing

@testable import YAML

/// A compact rendering to compare whole trees: plain nulls as `null`, other scalars quoted.
func render(_ node: YAMLNode) -> String {
    switch node.content {
    case .scalar(let scalar):
        if scalar.isNull { return "null" }
        var out = "\""
        for character in scalar.text {
            switch character {
            case "\n": out += "\\n"
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default: out.append(character)
            }
        }
        return out + "\""
    case .sequence(let items):
        return "[" + items.map(render).joined(separator: ",") + "]"
    case .mapping(let entries):
        return "{" + entries.map { "\"\($0.key)\":" + render($0.value) }.joined(separator: ",") + "}"
    }
}

func parsed(_ text: String) throws -> String {
    render(try YAML.parse(text))
}

func failure(_ text: String) -> YAMLError? {
    do {
        _ = try YAML.parseDocuments(text)
        return nil
    } catch {
        return error
    }
}

/// The examples of the YAML 1.2.2 specification (chapter 2 and the scalar chapters) that fall in the
/// supported subset, with the values the spec gives for them.
@Suite struct YAMLSpecExampleTests {
    @Test func example2_1SequenceOfScalars() throws {
        #expect(
            try parsed("- Mark McGwire\n- Sammy Sosa\n- Ken Griffey\n")
                == #"["Mark McGwire","Sammy Sosa","Ken Griffey"]"#)
    }

    @Test func example2_2MappingScalarsToScalars() throws {
        let text = "hr:  65    # Home runs\navg: 0.278 # Batting average\nrbi: 147   # Runs Batted In\n"
        #expect(try parsed(text) == #"{"hr":"65","avg":"0.278","rbi":"147"}"#)
    }

    @Test func example2_3MappingScalarsToSequences() throws {
        let text = """
            american:
            - Boston Red Sox
            - Detroit Tigers
            - New York Yankees
            national:
            - New York Mets
            - Chicago Cubs
            - Atlanta Braves

            """
        #expect(
            try parsed(text)
                == #"""
                {"american":["Boston Red Sox","Detroit Tigers","New York Yankees"],"national":["New York Mets",\#
                "Chicago Cubs","Atlanta Braves"]}
                """#
        )
    }

    @Test func example2_4SequenceOfMappings() throws {
        let text = """
            -
              name: Mark McGwire
              hr:   65
              avg:  0.278
            -
              name: Sammy Sosa
              hr:   63
              avg:  0.288

            """
        #expect(
            try parsed(text)
                == #"[{"name":"Mark McGwire","hr":"65","avg":"0.278"},{"name":"Sammy Sosa","hr":"63","avg":"0.288"}]"#)
    }

    @Test func example2_5SequenceOfSequences() throws {
        let text = """
            - [name        , hr, avg  ]
            - [Mark McGwire, 65, 0.278]
            - [Sammy Sosa  , 63, 0.288]

            """
        #expect(try parsed(text) == #"[["name","hr","avg"],["Mark McGwire","65","0.278"],["Sammy Sosa","63","0.288"]]"#)
    }

    @Test func example2_6MappingOfMappings() throws {
        let text = """
            Mark McGwire: {hr: 65, avg: 0.278}
            Sammy Sosa: {
                hr: 63,
                avg: 0.288,
             }

            """
        #expect(
            try parsed(text) == #"{"Mark McGwire":{"hr":"65","avg":"0.278"},"Sammy Sosa":{"hr":"63","avg":"0.288"}}"#)
    }

    @Test func example2_7TwoDocumentsInAStream() throws {
        let text = """
            # Ranking of 1998 home runs
            ---
            - Mark McGwire
            - Sammy Sosa
            - Ken Griffey

            # Team ranking
            ---
            - Chicago Cubs
            - St Louis Cardinals

            """
        let documents = try YAML.parseDocuments(text)
        #expect(
            documents.map(render) == [
                #"["Mark McGwire","Sammy Sosa","Ken Griffey"]"#, #"["Chicago Cubs","St Louis Cardinals"]"#,
            ])
        #expect(failure(text) == nil)
        #expect(throws: YAMLError.self) { try YAML.parse(text) }
    }

    @Test func example2_8PlayByPlay() throws {
        let text = """
            ---
            time: 20:03:20
            player: Sammy Sosa
            action: strike (miss)
            ...
            ---
            time: 20:03:47
            player: Sammy Sosa
            action: grand slam
            ...

            """
        let documents = try YAML.parseDocuments(text)
        #expect(
            documents.map(render) == [
                #"{"time":"20:03:20","player":"Sammy Sosa","action":"strike (miss)"}"#,
                #"{"time":"20:03:47","player":"Sammy Sosa","action":"grand slam"}"#,
            ])
    }

    @Test func example2_9Comments() throws {
        let text = """
            ---
            hr: # 1998 hr ranking
            - Mark McGwire
            - Sammy Sosa
            # 1998 rbi ranking
            rbi:
            - Sammy Sosa
            - Ken Griffey

            """
        #expect(try parsed(text) == #"{"hr":["Mark McGwire","Sammy Sosa"],"rbi":["Sammy Sosa","Ken Griffey"]}"#)
    }

    @Test func example2_12CompactNestedMapping() throws {
        let text = """
            ---
            # Products purchased
            - item    : Super Hoop
              quantity: 1
            - item    : Basketball
              quantity: 4
            - item    : Big Shoes
              quantity: 1

            """
        #expect(
            try parsed(text)
                == #"""
                [{"item":"Super Hoop","quantity":"1"},{"item":"Basketball","quantity":"4"},{"item":"Big Shoes",\#
                "quantity":"1"}]
                """#
        )
    }

    @Test func example2_13LiteralNewlinesPreserved() throws {
        let text = "# ASCII Art\n--- |\n  \\//||\\/||\n  // ||  ||__\n"
        #expect(try YAML.parse(text).scalar == YAMLScalar("\\//||\\/||\n// ||  ||__\n", style: .literal))
    }

    @Test func example2_14FoldedNewlinesBecomeSpaces() throws {
        let text = "--- >\n  Mark McGwire's\n  year was crippled\n  by a knee injury.\n"
        #expect(try YAML.parse(text).scalar?.text == "Mark McGwire's year was crippled by a knee injury.\n")
    }

    @Test func example2_15FoldedMoreIndentedAndBlankLines() throws {
        let text = """
            --- >
             Sammy Sosa completed another
             fine season with great stats.

               63 Home Runs
               0.288 Batting Average

             What a year!

            """
        #expect(
            try YAML.parse(text).scalar?.text
                == """
                Sammy Sosa completed another fine season with great stats.\n\n  63 Home Runs\n\
                  0.288 Batting Average\n\nWhat a year!\n
                """
        )
    }

    @Test func example2_16IndentationDeterminesScope() throws {
        let text = """
            name: Mark McGwire
            accomplishment: >
              Mark set a major league
              home run record in 1998.
            stats: |
              65 Home Runs
              0.278 Batting Average

            """
        #expect(
            try parsed(text)
                == #"""
                {"name":"Mark McGwire","accomplishment":"Mark set a major league home run record in 1998.\n",\#
                "stats":"65 Home Runs\n0.278 Batting Average\n"}
                """#
        )
    }

    @Test func example2_17QuotedScalars() throws {
        let text = #"""
            unicode: "Sosa did fine.\u263A"
            control: "\b1998\t1999\t2000\n"
            hex esc: "\x0d\x0a is \r\n"

            single: '"Howdy!" he cried.'
            quoted: ' # Not a ''comment''.'
            tie-fighter: '|\-*-/|'

            """#
        let node = try YAML.parse(text)
        #expect(node["unicode"]?.scalar?.text == "Sosa did fine.\u{263A}")
        #expect(node["control"]?.scalar?.text == "\u{8}1998\t1999\t2000\n")
        #expect(node["hex esc"]?.scalar?.text == "\r\n is \r\n")
        #expect(node["single"]?.scalar?.text == "\"Howdy!\" he cried.")
        #expect(node["quoted"]?.scalar?.text == " # Not a 'comment'.")
        #expect(node["tie-fighter"]?.scalar?.text == "|\\-*-/|")
    }

    @Test func example2_18MultiLineFlowScalars() throws {
        let text = """
            plain:
              This unquoted scalar
              spans many lines.

            quoted: "So does this
              quoted scalar.\\n"

            """
        #expect(
            try parsed(text)
                == #"{"plain":"This unquoted scalar spans many lines.","quoted":"So does this quoted scalar.\n"}"#)
    }

    @Test func example5_3BlockStructureIndicators() throws {
        #expect(
            try parsed("sequence:\n- one\n- two\nmapping:\n  sky: blue\n  sea: green\n")
                == #"{"sequence":["one","two"],"mapping":{"sky":"blue","sea":"green"}}"#)
    }

    @Test func example5_4FlowCollectionIndicators() throws {
        #expect(
            try parsed("sequence: [ one, two, ]\nmapping: { sky: blue, sea: green }\n")
                == #"{"sequence":["one","two"],"mapping":{"sky":"blue","sea":"green"}}"#)
    }

    @Test func example5_9DirectiveIndicator() throws {
        #expect(try YAML.parse("%YAML 1.2\n--- text\n").scalar?.text == "text")
    }

    @Test func example6_1IndentationSpaces() throws {
        let text = """
              # Leading comment line spaces are
               # neither content nor indentation.

            Not indented:
             By one space: |
                By four
                  spaces
             Flow style: [    # Leading spaces
               By two,        # in flow style
              Also by two,    # are neither
              \tStill by two   # content nor
                ]             # indentation.

            """
        #expect(
            try parsed(text)
                == #"""
                {"Not indented":{"By one space":"By four\n  spaces\n","Flow style":["By two","Also by two",\#
                "Still by two"]}}
                """#
        )
    }

    @Test func example7_4DoubleQuotedImplicitKeys() throws {
        #expect(
            try parsed("\"implicit block key\" : [\n  \"implicit flow key\" : value,\n ]\n")
                == #"{"implicit block key":[{"implicit flow key":"value"}]}"#)
    }

    @Test func example7_5DoubleQuotedLineBreaks() throws {
        let text = "\"folded \nto a space,\t\n \nto a line feed, or \t\\\n \\ \tnon-content\"\n"
        #expect(try YAML.parse(text).scalar?.text == "folded to a space,\nto a line feed, or \t \tnon-content")
    }

    @Test func example7_9SingleQuotedLines() throws {
        #expect(
            try YAML.parse("' 1st non-empty\n\n 2nd non-empty \n\t3rd non-empty '\n").scalar?.text
                == " 1st non-empty\n2nd non-empty 3rd non-empty ")
    }

    @Test func example7_12PlainLines() throws {
        #expect(
            try YAML.parse("1st non-empty\n\n 2nd non-empty \n\t3rd non-empty\n").scalar?.text
                == "1st non-empty\n2nd non-empty 3rd non-empty")
    }

    @Test func example7_13FlowSequence() throws {
        #expect(try parsed("- [ one, two, ]\n- [three ,four]\n") == #"[["one","two"],["three","four"]]"#)
    }

    @Test func example7_15FlowMappings() throws {
        #expect(
            try parsed("- { one : two , three: four , }\n- {five: six,seven : eight}\n")
                == #"[{"one":"two","three":"four"},{"five":"six","seven":"eight"}]"#)
    }

    @Test func example8_1BlockScalarHeaders() throws {
        let text =
            """
            - | # Empty header\n literal\n- >1 # Indentation indicator\n  folded\n- |+ # Chomping indicator\n keep\n\n\
            - >1- # Both indicators\n  strip\n
            """
        #expect(try parsed(text) == #"["literal\n"," folded\n","keep\n\n"," strip"]"#)
    }

    @Test func example8_4ChompingFinalLineBreak() throws {
        #expect(
            try parsed("strip: |-\n  text\nclip: |\n  text\nkeep: |+\n  text\n")
                == #"{"strip":"text","clip":"text\n","keep":"text\n"}"#)
    }

    @Test func example8_6EmptyScalarChomping() throws {
        #expect(try parsed("strip: >-\n\nclip: >\n\nkeep: |+\n\n") == #"{"strip":"","clip":"","keep":"\n"}"#)
    }

    @Test func example8_10FoldedLines() throws {
        let text =
            ">\n\n folded\n line\n\n next\n line\n   * bullet\n\n   * list\n   * lines\n\n last\n line\n\n# Comment\n"
        #expect(
            try YAML.parse(text).scalar?.text
                == "\nfolded line\nnext line\n  * bullet\n\n  * list\n  * lines\n\nlast line\n")
    }

    @Test func example8_14BlockSequence() throws {
        #expect(
            try parsed("block sequence:\n  - one\n  - two : three\n") == #"{"block sequence":["one",{"two":"three"}]}"#)
    }

    @Test func example8_15BlockSequenceEntryTypes() throws {
        #expect(
            try parsed(
                "- # Empty\n- |\n block node\n- - one # Compact\n  - two # sequence\n- one: two # Compact mapping\n")
                == #"[null,"block node\n",["one","two"],{"one":"two"}]"#)
    }

    @Test func example8_22BlockCollectionNodes() throws {
        #expect(
            try parsed("sequence:\n- entry\n- [nested]\nmapping:\n foo: bar\n")
                == #"{"sequence":["entry",["nested"]],"mapping":{"foo":"bar"}}"#)
    }

    /// Examples that need anchors, aliases, tags or complex keys: refused, each with its reason.
    @Test func examplesOutsideTheSubsetAreRefused() {
        #expect(
            failure("---\nhr:\n  - Mark McGwire\n  - &SS Sammy Sosa\nrbi:\n  - *SS\n")?.message.contains("anchors")
                == true)
        #expect(
            failure("? - Detroit Tigers\n  - Chicago cubs\n: - 2001-07-23\n")?.message.contains("complex keys") == true)
        #expect(failure("---\nnot-date: !!str 2002-04-28\n")?.message.contains("tags") == true)
        #expect(failure("%TAG ! tag:clarkevans.com,2002:\n--- !shape\n")?.message.contains("%TAG") == true)
        #expect(failure("- &CENTER { x: 1, y: 2 }\n- << : *CENTER\n")?.message.contains("anchors") == true)
        #expect(failure("base: {a: 1}\nother:\n  <<: {a: 2}\n")?.message.contains("merge keys") == true)
    }
}
